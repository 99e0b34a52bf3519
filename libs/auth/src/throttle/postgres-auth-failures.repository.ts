import type { AuthFailureStore, FailureCount, FailurePolicy } from './auth-failure-store';

/** Runs one statement and returns its rows: a TypeORM `DataSource`, or pg wrapped to return `rows`. */
export interface SqlRunner {
  query(sql: string, params: unknown[]): Promise<unknown[]>;
}

/**
 * The table, for a service that creates it itself (the provisioner); the catalog's migration
 * AuthFailures creates the same one. UNLOGGED: counters need no WAL and no standby copy, and
 * losing them in a crash only forgives some failures.
 */
export function authFailuresTableSql(table: string): string {
  return `CREATE UNLOGGED TABLE IF NOT EXISTS ${table} (
    client text PRIMARY KEY,
    window_started_at timestamptz NOT NULL,
    failures integer NOT NULL,
    blocked_until timestamptz
  )`;
}

/**
 * Failed authentications per client in PostgreSQL: one upsert per failure, on the database's
 * clock so replicas agree. A failure after the window has passed starts a new window; the one
 * past the limit blocks the client from now on for the block time (renewed by every further
 * failure that reaches the store). Rows of clients neither counting nor blocked are swept at
 * most once per window, so the table holds about one window's worth of failing clients.
 */
export class PostgresAuthFailuresRepository implements AuthFailureStore {
  private lastSweep = 0;

  /** `table` is a trusted identifier (quoted and schema-qualified as needed), never input. */
  constructor(
    private readonly sql: SqlRunner,
    private readonly table: string,
  ) {}

  async recordFailure(client: string, policy: FailurePolicy): Promise<FailureCount> {
    const [row] = (await this.sql.query(
      `WITH policy AS (
         SELECT now() - make_interval(secs => $3::bigint / 1000.0) AS window_open,
                now() + make_interval(secs => $4::bigint / 1000.0) AS block_end)
       INSERT INTO ${this.table} AS f (client, window_started_at, failures, blocked_until)
       SELECT $1, now(), 1, CASE WHEN 1 > $2::int THEN block_end END FROM policy
       ON CONFLICT (client) DO UPDATE SET
         window_started_at = CASE WHEN f.window_started_at > (SELECT window_open FROM policy)
           THEN f.window_started_at ELSE now() END,
         failures = CASE WHEN f.window_started_at > (SELECT window_open FROM policy)
           THEN f.failures + 1 ELSE 1 END,
         blocked_until = CASE
           WHEN f.window_started_at > (SELECT window_open FROM policy) AND f.failures + 1 > $2::int
           THEN (SELECT block_end FROM policy) ELSE f.blocked_until END
       RETURNING failures,
         GREATEST(0, CEIL(EXTRACT(EPOCH FROM (blocked_until - now())) * 1000))::bigint AS blocked_ms`,
      [client, policy.maxFailures, policy.windowMs, policy.blockMs],
    )) as { failures: number; blocked_ms: string | null }[];
    await this.sweep(policy);
    return { failures: Number(row.failures), blockedForMs: Number(row.blocked_ms ?? 0) };
  }

  private async sweep(policy: FailurePolicy): Promise<void> {
    if (Date.now() - this.lastSweep < policy.windowMs) return;
    this.lastSweep = Date.now();
    await this.sql.query(
      `DELETE FROM ${this.table}
       WHERE window_started_at < now() - make_interval(secs => $1::bigint / 1000.0)
         AND (blocked_until IS NULL OR blocked_until < now())`,
      [policy.windowMs],
    );
  }
}
