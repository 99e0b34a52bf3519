import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ForbiddenError, NotFoundError } from '@app/errors';
import { AccessesRepository } from '../accesses/accesses.repository';
import { PeopleRepository } from '../people/people.repository';
import { UsersRepository } from '../users/users.repository';
import type { Viewer } from '../auth/viewer';
import type { NotListedReason, PermissionsExplained } from './permissions.dto';

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

  /**
   * Why each of the person's accesses is listed or not, for the global key only: an admin who
   * gets `[]` learns that the access ended, or that its dataset has no exposure yet
   * (`npm run catalog -- expose`), instead of guessing. Also what the visas route and
   * `npm run catalog -- permissions explain` answer: the visas are these same accesses.
   * `callerKind` is the credential's kind (`global`, `user`, `endpoint`, a broker's, `bearer`).
   */
  async explain(
    manager: EntityManager,
    callerKind: string,
    oidcId: string,
  ): Promise<PermissionsExplained> {
    if (callerKind !== 'global') {
      throw new ForbiddenError('Only the global key may ask why (explain=true)');
    }
    const person = await this.people.findBySubject(manager, oidcId);
    if (person === undefined) throw new NotFoundError('No user or contact with this identifier');
    const rows = await this.accesses.explainedAccesses(manager, person);
    const accessions = new Set<string>();
    const notListed: PermissionsExplained['not_listed'] = [];
    for (const row of rows) {
      const reason = notListedReason(row);
      if (reason === undefined) accessions.add(row.accession!);
      else notListed.push({ accession: row.accession, title: row.title, reason });
    }
    return { subject: oidcId, accessions: [...accessions].sort(), not_listed: notListed };
  }
}

function notListedReason(row: {
  accession: string | null;
  status: string;
  current: boolean;
  exposed: boolean;
}): NotListedReason | undefined {
  if (!row.current) return row.status === 'terminated' ? 'terminated' : 'expired';
  if (row.accession === null) return 'no_accession';
  if (!row.exposed) return 'not_exposed';
  return undefined;
}
