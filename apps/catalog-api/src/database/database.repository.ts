import { Injectable } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource, EntityManager, QueryRunner } from 'typeorm';

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
