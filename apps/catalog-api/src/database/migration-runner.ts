import type { DataSource, Migration } from 'typeorm';
import { DatabaseRepository } from './database.repository';

/** One lock id for the catalog schema: every replica and the migration Job contend for it. */
export const MIGRATION_LOCK_ID = 731_104_001;

/**
 * Runs pending migrations while holding a Postgres advisory lock, so replicas starting
 * together (or a Job and a replica) apply each migration exactly once; the others wait and
 * then find nothing to do.
 */
export async function runMigrationsWithLock(dataSource: DataSource): Promise<Migration[]> {
  // Built here rather than injected: the migration CLI and the tests run this without Nest.
  const database = new DatabaseRepository(dataSource);
  const lockRunner = dataSource.createQueryRunner();
  await lockRunner.connect();
  try {
    await database.lockSession(lockRunner, MIGRATION_LOCK_ID);
    return await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await database.unlockSession(lockRunner, MIGRATION_LOCK_ID).catch(() => undefined);
    await lockRunner.release();
  }
}
