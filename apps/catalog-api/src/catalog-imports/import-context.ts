import type { EntityManager } from 'typeorm';
import { CappedProblems, ValidationFailedError } from '@app/errors';
import type { AuditActor, AuditRecord } from '../audit/audit.service';
import type { ImportRepositories } from './import-repositories';

/**
 * State of one import inside its transaction: the problems found so far (each with the item
 * index and field), the counts, the audit entries written at the end, and the repositories
 * the importers write through (always with `manager`).
 */
export class ImportContext {
  /** The first MAX_REPORTED_PROBLEMS kept, all counted: a document of any size stays bounded. */
  readonly problems = new CappedProblems();
  readonly audit: AuditRecord[] = [];
  created = 0;
  updated = 0;

  constructor(
    readonly manager: EntityManager,
    readonly actor: AuditActor,
    readonly repos: ImportRepositories,
  ) {}

  problem(index: number, field: string, message: string): void {
    this.problems.add({ index, field, message });
  }

  /** Ends the import (and rolls its transaction back) when anything was wrong. */
  throwIfProblems(): void {
    if (this.problems.count > 0) throw new ValidationFailedError(this.problems);
  }

  recordWrite(
    objectType: string,
    objectId: number,
    created: boolean,
    change: Record<string, unknown>,
  ): void {
    if (created) this.created++;
    else this.updated++;
    this.audit.push({
      actor: this.actor,
      action: created ? 'create' : 'update',
      objectType,
      objectId,
      change,
    });
  }

  /** Audits a change an import makes to a record it does not import (not counted). */
  recordSideWrite(objectType: string, objectId: number, change: Record<string, unknown>): void {
    this.audit.push({ actor: this.actor, action: 'update', objectType, objectId, change });
  }
}

/** Case-insensitive key used for natural keys and reference names. */
export const fold = (value: string): string => value.trim().toLowerCase();
