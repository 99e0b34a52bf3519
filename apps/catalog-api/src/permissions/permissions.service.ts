import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ForbiddenError, NotFoundError } from '@app/errors';
import { AccessesRepository } from '../accesses/accesses.repository';
import { PeopleRepository } from '../people/people.repository';
import { UsersRepository } from '../users/users.repository';
import type { Viewer } from '../auth/viewer';

@Injectable()
export class PermissionsService {
  constructor(
    private readonly people: PeopleRepository,
    private readonly accesses: AccessesRepository,
    private readonly users: UsersRepository,
  ) {}

  /** As datasetAccessions, for a viewer: a user key may only ask about its own holder. */
  async datasetAccessionsFor(
    manager: EntityManager,
    viewer: Viewer,
    oidcId: string,
  ): Promise<string[]> {
    if (viewer.kind === 'user' && (await this.users.oidcIdOf(viewer.userId, manager)) !== oidcId) {
      throw new ForbiddenError('A user key may only read its own permissions');
    }
    return this.datasetAccessions(manager, oidcId);
  }

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
