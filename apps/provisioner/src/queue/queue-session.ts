import { assertKeepsSessions } from '@app/platform';
import type { QueueBackendConfig } from './queue-backend';

/**
 * Refuses to start the PostgreSQL queue backend behind a pooler in transaction mode: its workers
 * wait for jobs on a LISTEN, which such a pooler silently breaks (jobs would then only be seen
 * when a wait times out). Redis needs no check.
 */
export async function assertQueueSession(backend: QueueBackendConfig): Promise<void> {
  if (backend.kind !== 'postgres') return;
  const { connectionString } = backend.connection as { connectionString: string };
  await assertKeepsSessions(
    connectionString,
    'the PostgreSQL queue backend needs a session of its own (LISTEN)',
    'set DATABASE_DIRECT_URL to the database itself, or REDIS_URL',
  );
}
