import { Client } from 'pg';
import { StartRefused } from './run-main';

const CONNECT_TIMEOUT_MS = 5_000;
/** Rounds of the probe: PgBouncer hands a freed server connection to the next client (LIFO). */
const ROUNDS = 3;

/**
 * Whether connections to a PostgreSQL URL keep a server session of their own, which a LISTEN, a
 * session advisory lock or a session setting needs (BullMQ's PostgreSQL backend, the catalog's
 * migrations). A pooler in transaction or statement
 * mode (PgBouncer's `pool_mode = transaction`) gives a server connection back to its pool after
 * each transaction, and the next client gets it: two clients then see one backend process.
 */
export class PostgresSessionRepository {
  constructor(private readonly url: string) {}

  /**
   * Two clients take turns: `a` runs a statement alone, then `b` a transaction. On the database
   * itself (or a pooler in session mode) each keeps its own backend throughout; behind a
   * transaction-mode pooler `b` gets the server connection `a` just gave back, or `a` a new one.
   */
  async keepsSessions(): Promise<boolean> {
    const a = this.client();
    const b = this.client();
    try {
      await Promise.all([a.connect(), b.connect()]);
      const pid = async (client: Client) =>
        (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      const first = await pid(a);
      for (let round = 0; round < ROUNDS; round++) {
        await b.query('BEGIN');
        const other = await pid(b);
        await b.query('COMMIT');
        if (other === first || (await pid(a)) !== first) return false;
      }
      return true;
    } finally {
      await Promise.all([a.end().catch(() => undefined), b.end().catch(() => undefined)]);
    }
  }

  private client(): Client {
    const client = new Client({
      connectionString: this.url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      application_name: 'provisioner session probe',
    });
    client.on('error', () => undefined);
    return client;
  }
}

/**
 * Refuses to start (StartRefused) when `url` reaches its database through a pooler in
 * transaction mode, where `needs` (what of this process needs a session) would silently break
 * or leak onto other clients' connections; `remedy` says what to set instead.
 */
export async function assertKeepsSessions(
  url: string,
  needs: string,
  remedy: string,
): Promise<void> {
  if (await new PostgresSessionRepository(url).keepsSessions()) return;
  throw new StartRefused(
    `${needs}, but its database is reached through a pooler in transaction mode (PgBouncer): ${remedy}`,
  );
}
