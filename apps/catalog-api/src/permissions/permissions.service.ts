import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { NotFoundError } from '@app/errors';
import { AccessesRepository } from '../accesses/accesses.repository';
import { PeopleRepository } from '../identity/people.repository';

@Injectable()
export class PermissionsService {
  constructor(
    private readonly people: PeopleRepository,
    private readonly accesses: AccessesRepository,
  ) {}

  /**
   * Accessions of the datasets the person (a user, else a contact, with that identity-provider
   * subject) may use: an active access that has not expired (expiring today still counts) on a
   * dataset with at least one exposure, active or deprecated.
   */
  async datasetAccessions(manager: EntityManager, oidcId: string): Promise<string[]> {
    const person = await this.people.findBySubject(manager, oidcId);
    if (person === undefined) throw new NotFoundError('No user or contact with this identifier');
    return this.accesses.usableDatasetAccessions(manager, person);
  }
}
