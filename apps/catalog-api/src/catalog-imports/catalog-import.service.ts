import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ConflictError } from '@app/errors';
import { AuditActor, AuditService } from '../audit/audit.service';
import { ADVISORY_LOCKS } from '../common/advisory-locks';
import { DatabaseRepository } from '../database/database.repository';
import { IMPORTERS } from './importers';
import { ImportContext } from './import-context';
import { ImportRepositories } from './import-repositories';
import { parseDocument } from './import-document';
import type { ImportKind } from './import-shapes';

export interface ImportResult {
  status: 'Success';
  created: number;
  updated: number;
}

/**
 * Imports a document of one kind: structure checked first, then, in one transaction under the
 * import lock, references resolved and every item upserted; any problem rolls everything back.
 * Table triggers bump the catalog data version in the same transaction.
 */
@Injectable()
export class CatalogImportService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly database: DatabaseRepository,
    private readonly repos: ImportRepositories,
    private readonly audit: AuditService,
  ) {}

  async import(kind: ImportKind, body: unknown, actor: AuditActor): Promise<ImportResult> {
    const items = await parseDocument(kind, body);
    try {
      return await this.dataSource.transaction(async (manager) => {
        await this.database.lockForTransaction(manager, ADVISORY_LOCKS.catalogImport);
        const ctx = new ImportContext(manager, actor, this.repos);
        await IMPORTERS[kind](ctx, items);
        ctx.throwIfProblems();
        await this.audit.recordMany(manager, ctx.audit);
        return { status: 'Success' as const, created: ctx.created, updated: ctx.updated };
      });
    } catch (error) {
      // Writes outside imports (admin routes, SQL) are not under the lock.
      if ((error as { code?: string }).code === '23505') {
        throw new ConflictError('A concurrent change conflicts with this import; retry it');
      }
      throw error;
    }
  }
}
