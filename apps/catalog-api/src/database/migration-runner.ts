import { setTimeout as sleep } from 'node:timers/promises';
import { MigrationExecutor, type DataSource } from 'typeorm';
import { DatabaseRepository, type SessionTimeouts } from './database.repository';

/** One lock id for the catalog schema: every replica and the migration Job contend for it. */
export const MIGRATION_LOCK_ID = 731_104_001;

/**
 * How long one migration statement may wait for a table lock. A statement waiting for an
 * ACCESS EXCLUSIVE lock queues every later query of that table behind it, so the running
 * release's requests stall at most this long before the migration gives way and tries again.
 */
export const MIGRATION_LOCK_TIMEOUT_MS = 5_000;

/**
 * How often a process that finds the migration lock taken asks again. Asked, not waited for in
 * one statement: a statement waiting for the lock holds a snapshot, and an index the holder
 * builds CONCURRENTLY waits for every older snapshot to end, so the two would wait for each
 * other (a deadlock Postgres ends by failing one of them).
 */
const MIGRATION_LOCK_POLL_MS = 250;

/** Attempts of a migration that keeps meeting a lock, with the pauses between them. */
export const MIGRATION_LOCK_ATTEMPTS = 10;
const pauseBefore = (attempt: number) => Math.min(1_000 * 2 ** (attempt - 2), 30_000);

/** lock_not_available: the statement waited `lock_timeout` for a lock. */
const LOCK_NOT_AVAILABLE = '55P03';

export interface MigrationRunOptions {
  lockTimeoutMs?: number;
  attempts?: number;
  /** Told of each attempt that met a lock, before the pause. */
  onLockTimeout?: (attempt: number, error: Error, pauseMs: number) => void;
}

/**
 * Runs pending migrations while holding a Postgres advisory lock, so replicas starting
 * together (or a Job and a replica) apply each migration exactly once; the others wait and
 * then find nothing to do. Returns the names of the migrations it applied.
 *
 * The migrations run on one connection with their own time-outs: no statement time-out (an
 * index built CONCURRENTLY on a large table takes what it takes), no limit on the wait for the
 * advisory lock (the Job's deadline bounds it; it is asked for every `MIGRATION_LOCK_POLL_MS`), and a short `lock_timeout` on every other lock,
 * so a migration never holds the running release's queries up for long: it gives way, pauses
 * and tries again. Each migration runs in a transaction of its own (unless it declares
 * `transaction = false`, for CONCURRENTLY), so a retry resumes at the migration that met a lock.
 */
export async function runMigrationsWithLock(
  dataSource: DataSource,
  options: MigrationRunOptions = {},
): Promise<string[]> {
  const lockTimeoutMs = options.lockTimeoutMs ?? MIGRATION_LOCK_TIMEOUT_MS;
  const attempts = options.attempts ?? MIGRATION_LOCK_ATTEMPTS;
  // Built here rather than injected: the migration CLI and the tests run this without Nest.
  const database = new DatabaseRepository(dataSource);
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  let saved: SessionTimeouts | undefined;
  try {
    saved = await database.setSessionTimeouts(runner, { statementTimeoutMs: 0, lockTimeoutMs });
    while (!(await database.tryLockSession(runner, MIGRATION_LOCK_ID)))
      await sleep(MIGRATION_LOCK_POLL_MS);
    const before = new Set(await database.appliedMigrations(runner));
    for (let attempt = 1; ; attempt++) {
      try {
        const executor = new MigrationExecutor(dataSource, runner);
        executor.transaction = 'each';
        await executor.executePendingMigrations();
        break;
      } catch (error) {
        if ((error as { code?: unknown }).code !== LOCK_NOT_AVAILABLE || attempt >= attempts)
          throw error;
        const pause = pauseBefore(attempt + 1);
        options.onLockTimeout?.(attempt, error as Error, pause);
        await sleep(pause);
      }
    }
    return (await database.appliedMigrations(runner)).filter((name) => !before.has(name));
  } finally {
    await database.unlockSession(runner, MIGRATION_LOCK_ID).catch(() => undefined);
    if (saved) await database.restoreSessionTimeouts(runner, saved).catch(() => undefined);
    await runner.release();
  }
}
