import { Injectable } from '@nestjs/common';
import { Client, type Pool } from 'pg';
import { DataSource, EntityManager, QueryRunner } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/** A second connection reading the snapshot of another transaction (`snapshotReader`). */
export interface SnapshotReader {
  manager: EntityManager;
  /** Ends its transaction and gives the connection back to the pool. */
  release(): Promise<void>;
}

/**
 * The database server rather than a table: whether it answers, and its advisory locks (keys in
 * `common/advisory-locks.ts`, or beside the code that holds them). Transaction-level locks end
 * with the caller's transaction; session-level ones belong to one connection, so they take that
 * connection's query runner and the caller releases it.
 */
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

  /** Waits for `key`, then holds it on the runner's connection until `unlockSession`. */
  async lockSession(runner: QueryRunner, key: number): Promise<void> {
    await runner.query('SELECT pg_advisory_lock($1)', [key]);
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
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}
