import type { Pool, PoolClient } from 'pg';

/**
 * The repositories' transaction on a pooled connection (SQL stays in the data-access layer):
 * runs `work` in one transaction on a connection checked out of `pool`, and gives the connection
 * back (destroyed when it broke). While a connection is checked out, `pg-pool` no longer listens
 * for its errors: a server that ends the session between two statements (a failover's
 * "terminating connection due to administrator command", 57P01) would then emit an `error` that
 * nobody hears, which ends the process. It is heard here; the next statement fails with it.
 */
export class PooledTransactionRepository {
  constructor(private readonly pool: Pool) {}

  async run<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    const onError = (error: Error): void => {
      broken ??= error;
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  }
}
