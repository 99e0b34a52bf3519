import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { UsersRepository } from './users.repository';

export interface UserChoice {
  id: number;
  text: string;
}

@Injectable()
export class UsersService {
  constructor(private readonly users: UsersRepository) {}

  /** Active users for pickers; `text` falls back to the username when there is no name. */
  async choices(manager: EntityManager): Promise<UserChoice[]> {
    const rows = await this.users.listActive(manager);
    return rows.map((row) => ({
      id: row.id,
      text: `${row.first_name} ${row.last_name}`.trim() || row.username,
    }));
  }
}
