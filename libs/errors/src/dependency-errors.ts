import { types } from 'node:util';

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '08000',
  '08001',
  '08003',
  '08006',
  // read_only_sql_transaction: a write reaching a server that a failover or switchover has just
  // made a standby, before the way to the primary (HAProxy's check, a DNS name) follows it.
  '25006',
]);

/**
 * Postgres's; PgBouncer's when it loses or cannot reach its server (it sends these as errors with
 * SQLSTATE 08P01, protocol_violation, which a real protocol error shares: so by message; before 1.17,
 * "cannot connect to server" was its fast failure while server logins failed; "invalid server
 * parameter" is how it ends a client whose server connection answered the SET of the client's
 * parameters with an error, as a backend ended by a failover does: src/server.c,
 * handle_server_work, ErrorResponse while setting_vars), and
 * ioredis's while Redis is out of reach: a command refused offline (the API
 * does not queue them), retries used up, no Sentinel or Cluster node answering, a Cluster slot
 * without a primary, a write reaching a primary demoted by a failover (or one left without a
 * replica in sync, which refuses writes so that a failover loses none).
 */
const CONNECTION_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is closed|the database system is (starting up|shutting down|in recovery mode)|server conn crashed\?|pgbouncer cannot connect to server|server login has been failing|invalid server parameter|query_wait_timeout|Stream isn't writeable|Reached the max retries per request limit|All sentinels are unreachable|Failed to refresh slots cache|^CLUSTERDOWN|^READONLY|^NOREPLICAS|^LOADING|^MASTERDOWN/i;

/**
 * TypeORM's errors for a query runner released under its user: it releases one whose connection
 * emits an error (the server ended the session: a failover, a restart), so the statements after
 * it fail with these instead of PostgreSQL's (driver/postgres/PostgresQueryRunner.ts, `connect`).
 * Our code uses no runner after releasing it, so they mean a lost connection.
 */
const RELEASED_RUNNER_ERRORS = new Set([
  'QueryRunnerAlreadyReleasedError',
  'QueryRunnerProviderAlreadyReleasedError',
]);

/**
 * True for failures that mean a backing service (Postgres, Redis, an upstream API) is not
 * reachable right now, as opposed to a bug: those become 503 so callers retry instead of
 * reporting a server error.
 */
export function isDependencyUnavailable(error: unknown): boolean {
  // isNativeError, not `instanceof Error`: errors made by Node's own net/dns code come from
  // another realm wherever the app code runs in a VM context (jest), and must still count.
  if (!types.isNativeError(error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
  if (RELEASED_RUNNER_ERRORS.has(error.name)) return true;
  const cause = (error as { cause?: unknown }).cause;
  if (cause && cause !== error && isDependencyUnavailable(cause)) return true;
  return CONNECTION_MESSAGES.test(error.message);
}
