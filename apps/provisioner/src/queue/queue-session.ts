import { StartRefused } from '@app/platform';
import { PostgresSessionRepository } from './postgres-session.repository';
import type { QueueBackendConfig } from './queue-backend';

/**
 * Refuses to start the PostgreSQL queue backend behind a pooler in transaction mode: its workers
 * wait for jobs on a LISTEN, which such a pooler silently breaks (jobs would then only be seen
 * when a wait times out). Redis needs no check.
 */
export async function assertQueueSession(backend: QueueBackendConfig): Promise<void> {
  if (backend.kind !== 'postgres') return;
  const { connectionString } = backend.connection as { connectionString: string };
  if (await new PostgresSessionRepository(connectionString).keepsSessions()) return;
  throw new StartRefused(
    'the PostgreSQL queue backend needs a session of its own (LISTEN), but its database is ' +
      'reached through a pooler in transaction mode (PgBouncer): set DATABASE_DIRECT_URL to the ' +
      'database itself, or REDIS_URL',
  );
}
