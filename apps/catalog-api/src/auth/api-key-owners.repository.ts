import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** Who holds a key: an active user or an endpoint. */
export interface KeyOwnerRow {
  kind: 'user' | 'endpoint';
  id: number;
  name: string;
}

/** The holders of API keys, found by the keys' SHA-256 (users' and endpoints' `api_key_hash`). */
@Injectable()
export class ApiKeyOwnersRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * The active user holding the key with this hash, else, when `endpointsToo`, the endpoint:
   * one statement, one index probe per table.
   */
  async ownerOf(keyHash: string, endpointsToo: boolean): Promise<KeyOwnerRow | undefined> {
    const endpointPart = endpointsToo
      ? `UNION ALL SELECT 'endpoint' AS kind, id, name FROM endpoints WHERE api_key_hash = $1`
      : '';
    const rows = await this.dataSource.query<KeyOwnerRow[]>(
      `SELECT 'user' AS kind, id, username AS name FROM users
       WHERE api_key_hash = $1 AND is_active ${endpointPart} LIMIT 1`,
      [keyHash],
    );
    return rows[0];
  }
}
