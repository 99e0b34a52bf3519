import type { DataSource } from 'typeorm';
import { runMigrationsWithLock, type MigrationRunOptions } from './database/migration-runner';
import type { TermCategory } from './terms/term-category';
import { loadShippedVocabularies, type VocabularyLoadCounts } from './terms/vocabulary-loader';

export interface CatalogMigrationResult {
  /** Names of the migrations this run applied. */
  migrations: string[];
  /** What loading each shipped vocabulary did (all unchanged when it was loaded already). */
  vocabularies: Record<TermCategory, VocabularyLoadCounts>;
}

/**
 * The migration step of every release (the Job, the compose `migrate` service, MIGRATIONS_RUN):
 * the pending migrations, then the term vocabularies shipped with this release, so a fresh
 * deployment answers term searches and an upgrade brings newer vocabularies. Loading them again
 * writes nothing when they are unchanged.
 */
export async function migrateCatalog(
  dataSource: DataSource,
  options: MigrationRunOptions = {},
): Promise<CatalogMigrationResult> {
  const migrations = await runMigrationsWithLock(dataSource, options);
  const vocabularies = await loadShippedVocabularies(dataSource);
  return { migrations, vocabularies };
}
