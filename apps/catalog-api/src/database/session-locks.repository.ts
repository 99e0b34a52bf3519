import { Inject, Injectable } from '@nestjs/common';
import { Client } from 'pg';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';

/** A session advisory lock, held until `release` (which ends its connection). */
export interface SessionLock {
  release(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 5_000;

/**
 * Advisory locks held across several transactions (one identity-provider sync, one demo load).
 * Such a lock belongs to a session, which a pooler in transaction mode does not give: each lock
 * takes a connection of its own to the database itself (`sessionDatabaseUrl`, i.e.
 * DATABASE_DIRECT_URL when set), outside the pool, and ending that connection releases it even
 * when the process dies. Locks that end with one transaction stay in `DatabaseRepository`.
 */
@Injectable()
export class SessionLocksRepository {
  constructor(@Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings) {}

  /** Waits for `key`, then holds it. */
  async lock(key: number): Promise<SessionLock> {
    const client = await this.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [key]);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    return this.held(client, key);
  }

  /** Takes `key`, or answers null at once when another session holds it. */
  async tryLock(key: number): Promise<SessionLock | null> {
    const client = await this.connect();
    try {
      const { rows } = await client.query<{ locked: boolean }>(
        'SELECT pg_try_advisory_lock($1) AS locked',
        [key],
      );
      if (rows[0]?.locked) return this.held(client, key);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    await client.end().catch(() => undefined);
    return null;
  }

  private async connect(): Promise<Client> {
    const client = new Client({
      connectionString: this.settings.sessionDatabaseUrl,
      application_name: 'catalog-api session lock',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    // A connection lost while the lock is held: the lock is gone with it; nothing to report here.
    client.on('error', () => undefined);
    await client.connect();
    return client;
  }

  private held(client: Client, key: number): SessionLock {
    return {
      release: async () => {
        await client.query('SELECT pg_advisory_unlock($1)', [key]).catch(() => undefined);
        await client.end().catch(() => undefined);
      },
    };
  }
}
