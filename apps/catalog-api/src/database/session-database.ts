import { assertKeepsSessions } from '@app/platform';
import type { CatalogSettings } from '../config/catalog.settings';

/**
 * Refuses to start a catalog process whose session work would land on a pooler in transaction
 * mode: the migrations' advisory lock and session time-outs, the session locks of the
 * identity-provider sync and the demo load, and the version listener's LISTEN. Behind such a
 * pooler each statement may run on another server connection, so a lock is taken on one and
 * "released" on another, and stays held by a pooled connection for as long as it lives.
 */
export function assertSessionDatabase(
  settings: Pick<CatalogSettings, 'DATABASE_DIRECT_URL' | 'sessionDatabaseUrl'>,
): Promise<void> {
  const direct = settings.DATABASE_DIRECT_URL !== undefined;
  return assertKeepsSessions(
    settings.sessionDatabaseUrl,
    `the catalog needs a session of its own on ${direct ? 'DATABASE_DIRECT_URL' : 'DATABASE_URL'} ` +
      '(migrations and their advisory lock, session locks, the version listener)',
    direct
      ? 'set DATABASE_DIRECT_URL to the database itself, not to the pooler'
      : 'set DATABASE_DIRECT_URL to the database itself (DATABASE_URL may stay on the pooler)',
  );
}
