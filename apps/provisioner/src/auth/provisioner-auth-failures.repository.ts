import type { Pool } from 'pg';
import { PooledTransactionRepository } from '@app/platform';
import {
  authFailuresTableSql,
  AuthFailureStore,
  FailureCount,
  FailurePolicy,
  PostgresAuthFailuresRepository,
} from '@app/auth';

/** Serialises creating the table when several replicas start on an empty database. */
const CREATE_LOCK_ID = 731_104_014;

/**
 * Failed authentications in the queue's PostgreSQL: the table `<prefix>_auth.auth_failures`,
 * created on first use (the provisioner has no migrations), counted by the shared
 * PostgresAuthFailuresRepository. The pool is the caller's, and so is closing it.
 */
export class ProvisionerAuthFailuresRepository implements AuthFailureStore {
  private readonly schema: string;
  private readonly table: string;
  private readonly failures: PostgresAuthFailuresRepository;
  private tableReady?: Promise<void>;

  constructor(
    private readonly pool: Pool,
    prefix: string,
  ) {
    this.schema = `"${prefix}_auth"`;
    this.table = `${this.schema}."auth_failures"`;
    this.failures = new PostgresAuthFailuresRepository(
      { query: async (sql, params) => (await pool.query(sql, params)).rows },
      this.table,
    );
  }

  async recordFailure(client: string, policy: FailurePolicy): Promise<FailureCount> {
    await this.ensureTable();
    return this.failures.recordFailure(client, policy);
  }

  /** Creates the schema and table once per process; a failed attempt is retried next time. */
  private ensureTable(): Promise<void> {
    this.tableReady ??= (async () => {
      await new PooledTransactionRepository(this.pool).run(async (client) => {
        await client.query('SELECT pg_advisory_xact_lock($1)', [CREATE_LOCK_ID]);
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${this.schema}`);
        await client.query(authFailuresTableSql(this.table));
      });
    })().catch((error: unknown) => {
      this.tableReady = undefined;
      throw error;
    });
    return this.tableReady;
  }
}
