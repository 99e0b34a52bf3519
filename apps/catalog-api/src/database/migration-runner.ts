import type { DataSource, Migration } from 'typeorm';

/** One lock id for the catalog schema: every replica and the migration Job contend for it. */
export const MIGRATION_LOCK_ID = 731_104_001;

/**
 * Runs pending migrations while holding a Postgres advisory lock, so replicas starting
 * together (or a Job and a replica) apply each migration exactly once; the others wait and
 * then find nothing to do.
 */
export async function runMigrationsWithLock(dataSource: DataSource): Promise<Migration[]> {
  const lockRunner = dataSource.createQueryRunner();
  await lockRunner.connect();
  try {
    await lockRunner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    return await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await lockRunner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
    await lockRunner.release();
  }
}
