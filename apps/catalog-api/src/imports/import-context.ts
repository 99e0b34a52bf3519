import type { EntityManager } from 'typeorm';
import { FieldProblem, ValidationFailedError } from '@app/errors';
import type { AuditActor, AuditRecord } from '../audit/audit.service';
import type { ImportRepositories } from './import-repositories';

/**
 * State of one import inside its transaction: the problems found so far (each with the item
 * index and field), the counts, the audit entries written at the end, and the repositories
 * the importers write through (always with `manager`).
 */
export class ImportContext {
  readonly problems: FieldProblem[] = [];
  readonly audit: AuditRecord[] = [];
  created = 0;
  updated = 0;

  constructor(
    readonly manager: EntityManager,
    readonly actor: AuditActor,
    readonly repos: ImportRepositories,
  ) {}

  problem(index: number, field: string, message: string): void {
    this.problems.push({ index, field, message });
  }

  /** Ends the import (and rolls its transaction back) when anything was wrong. */
  throwIfProblems(): void {
    if (this.problems.length > 0) throw new ValidationFailedError(this.problems);
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
}

/** Case-insensitive key used for natural keys and reference names. */
export const fold = (value: string): string => value.trim().toLowerCase();
