import { once } from 'node:events';
import { Pool } from 'pg';
import { PooledTransactionRepository } from '@app/platform';
import { withClient } from '../../../scripts/lib/pg-client';
import { createEmptyDatabase } from '../../../test/support/databases';

/**
 * A session ended by the server while a transaction holds it (what a Patroni switchover does to
 * every backend: 57P01, then the socket closes). pg's Client emits that as an `error` event when
 * no statement is in flight, and pg-pool stops listening to a connection it has handed out
 * (node_modules/pg-pool/index.js, `_acquireClient` removes its idle listener): unheard, the event
 * ends the process.
 */
describe('PooledTransactionRepository: a session ended between two statements', () => {
  let url: string;
  let pool: Pool;

  beforeAll(async () => {
    url = await createEmptyDatabase('txn');
    pool = new Pool({ connectionString: url, max: 2 });
    pool.on('error', () => undefined);
  });
  afterAll(() => pool?.end());

  it('fails the next statement, never the process, and the pool goes on', async () => {
    const outcome = new PooledTransactionRepository(pool).run(async (client) => {
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const ended = once(client, 'end');
      await withClient(url, (admin) =>
        admin.query('SELECT pg_terminate_backend($1)', [rows[0].pid]),
      );
      // Between statements: the server's error arrives with nothing in flight.
      await ended;
      await client.query('SELECT 1');
    });
    await expect(outcome).rejects.toThrow(/not queryable|terminat/i);
    // The broken connection was destroyed, not handed out again.
    const { rows } = await pool.query<{ one: number }>('SELECT 1 AS one');
    expect(rows).toEqual([{ one: 1 }]);
    expect(pool.totalCount).toBe(1);
  });

  it('commits what the work did, and rolls back what fails', async () => {
    await new PooledTransactionRepository(pool).run((client) =>
      client.query('CREATE TABLE kept (n int)'),
    );
    await expect(
      new PooledTransactionRepository(pool).run(async (client) => {
        await client.query('INSERT INTO kept VALUES (1)');
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM kept');
    expect(rows).toEqual([{ n: 0 }]);
  });
});
