import { Client } from 'pg';

const CONNECT_TIMEOUT_MS = 5_000;
/** Rounds of the probe: PgBouncer hands a freed server connection to the next client (LIFO). */
const ROUNDS = 3;

/**
 * Whether connections to a PostgreSQL URL keep a server session of their own, which BullMQ's
 * PostgreSQL backend needs (its workers block on a LISTEN). A pooler in transaction or statement
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
