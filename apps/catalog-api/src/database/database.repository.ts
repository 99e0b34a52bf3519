import { Injectable } from '@nestjs/common';
import { Client, type Pool, type PoolClient } from 'pg';
import { DataSource, EntityManager, QueryRunner } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/** A second connection reading the snapshot of another transaction (`snapshotReader`). */
export interface SnapshotReader {
  manager: EntityManager;
  /** Ends its transaction and gives the connection back to the pool. */
  release(): Promise<void>;
}

/**
 * The database server rather than a table: whether it answers, its statement time-outs, and its
 * advisory locks (keys in `common/advisory-locks.ts`, or beside the code that holds them).
 * Transaction-level locks end with the caller's transaction; the session-level ones here belong
 * to one connection (the migration runner's, on the database itself), so they take that
 * connection's query runner and the caller releases it; the app's own session locks are in
 * `SessionLocksRepository`.
 */
/** A session's time-outs as PostgreSQL shows them (`30s`, `0`). */
export interface SessionTimeouts {
  statement: string;
  lock: string;
}

@Injectable()
export class DatabaseRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** One round trip on a pooled connection (the readiness check). */
  async ping(): Promise<void> {
    await this.dataSource.query('SELECT 1');
  }

  /**
   * A second connection in a REPEATABLE READ transaction that sees the very snapshot of the
   * REPEATABLE READ transaction of `manager` (pg_export_snapshot, SET TRANSACTION SNAPSHOT), so
   * a read split across both sees one state of the catalog; valid while that transaction is
   * open. Undefined when the pool cannot give a connection at once: a read that only goes
   * faster with a second connection must never wait for one (readers each holding a connection
   * and waiting for another would starve the pool).
   */
  async snapshotReader(manager: EntityManager): Promise<SnapshotReader | undefined> {
    const pool = (this.dataSource.driver as PostgresDriver).master as Pool;
    const free = pool.idleCount > 0 || pool.totalCount < (pool.options.max ?? 10); // pg-pool's default
    if (pool.waitingCount > 0 || !free) return undefined;
    const runner = this.dataSource.createQueryRunner();
    // Asked for in the same turn as the check, so no other request takes that connection.
    const connected = runner.connect();
    try {
      const [[{ snapshot }]] = await Promise.all([
        manager.query<{ snapshot: string }[]>('SELECT pg_export_snapshot() AS snapshot'),
        connected,
      ]);
      await runner.startTransaction('REPEATABLE READ');
      // An identifier such as 00000003-0000001B-1: SET takes no parameters.
      if (!/^[0-9A-F-]+$/i.test(snapshot)) throw new Error(`unexpected snapshot id ${snapshot}`);
      await runner.query(`SET TRANSACTION SNAPSHOT '${snapshot}'`);
    } catch (error) {
      await connected.catch(() => undefined);
      await endReader(runner);
      throw error;
    }
    return { manager: runner.manager, release: () => endReader(runner) };
  }

  /** Waits for `key`, then holds it until the transaction of `manager` ends. */
  async lockForTransaction(manager: EntityManager, key: number): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock($1)', [key]);
  }

  /** Takes `key` until the transaction ends; false, at once, when another session holds it. */
  async tryLockForTransaction(manager: EntityManager, key: number): Promise<boolean> {
    const [{ locked }] = await manager.query<{ locked: boolean }[]>(
      'SELECT pg_try_advisory_xact_lock($1) AS locked',
      [key],
    );
    return locked;
  }

  /** Takes `key` on the runner's connection; false, at once, when another session holds it. */
  async tryLockSession(runner: QueryRunner, key: number): Promise<boolean> {
    const [{ locked }] = (await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [
      key,
    ])) as { locked: boolean }[];
    return locked;
  }

  /** Releases `key` on the runner's connection. */
  async unlockSession(runner: QueryRunner, key: number): Promise<void> {
    await runner.query('SELECT pg_advisory_unlock($1)', [key]);
  }

  /**
   * Sets the time-outs of the runner's session (0 = none); returns the ones it had, for
   * `restoreSessionTimeouts`: a migration's statements have their own limits, not the pool's.
   * Restored rather than RESET: the pool sets its own on each new connection (not as a startup
   * parameter, which a pooler refuses), and RESET would go back to the server's default.
   */
  async setSessionTimeouts(
    runner: QueryRunner,
    timeouts: { statementTimeoutMs: number; lockTimeoutMs: number },
  ): Promise<SessionTimeouts> {
    const [before] = (await runner.query(
      `SELECT current_setting('statement_timeout') AS statement, current_setting('lock_timeout') AS lock,
        set_config('statement_timeout', $1, false), set_config('lock_timeout', $2, false)`,
      [`${timeouts.statementTimeoutMs}ms`, `${timeouts.lockTimeoutMs}ms`],
    )) as { statement: string; lock: string }[];
    return { statement: before.statement, lock: before.lock };
  }

  /** Back to the time-outs `setSessionTimeouts` found, before the connection returns to the pool. */
  async restoreSessionTimeouts(runner: QueryRunner, saved: SessionTimeouts): Promise<void> {
    await runner.query(
      "SELECT set_config('statement_timeout', $1, false), set_config('lock_timeout', $2, false)",
      [saved.statement, saved.lock],
    );
  }

  /**
   * The names of the migrations applied to the schema, in the order they ran; empty when none
   * ever ran (no `migrations` table).
   */
  async appliedMigrations(runner?: QueryRunner): Promise<string[]> {
    const query = <T>(sql: string) =>
      (runner ? runner.query(sql) : this.dataSource.query(sql)) as Promise<T>;
    const [{ present }] = await query<{ present: boolean }[]>(
      "SELECT to_regclass('migrations') IS NOT NULL AS present",
    );
    if (!present) return [];
    const rows = await query<{ name: string }[]>('SELECT name FROM migrations ORDER BY id');
    return rows.map((row) => row.name);
  }
}

/** Limits every statement of a connection of our own (a session), set once as it opens. */
export async function limitSessionStatements(client: PoolClient, ms: number): Promise<void> {
  await client.query(`SET statement_timeout = ${Math.trunc(ms)}`);
}

/** Limits the statements of the runner's transaction only (behind a pooler, see typeorm-options). */
export async function limitTransactionStatements(runner: QueryRunner, ms: number): Promise<void> {
  await runner.query(`SET LOCAL statement_timeout = ${Math.trunc(ms)}`);
}

/**
 * Ends the runner's transaction, if any (it only read), and gives its connection back. A
 * rollback that fails means a broken connection, which the pool drops; the read's own error, if
 * any, is the one worth reporting.
 */
async function endReader(runner: QueryRunner): Promise<void> {
  if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
  await runner.release();
}

/**
 * Connects to `url` on a connection of its own and runs one statement, failing within
 * `timeoutMs` when the server cannot be reached: for tools that must not wait on the ORM's
 * connection retries.
 */
export async function probeDatabase(url: string, timeoutMs: number): Promise<void> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  // A session ended by the server fails the statement; its `error` event must not end the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}
