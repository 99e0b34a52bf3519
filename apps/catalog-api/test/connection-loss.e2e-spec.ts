import { DataSource, EntityManager } from 'typeorm';
import { isDependencyUnavailable } from '@app/errors';
import { withClient } from '../../../scripts/lib/pg-client';
import { createEmptyDatabase } from '../../../test/support/databases';
import { buildTypeOrmOptions } from '../src/typeorm-options';

/**
 * A connection the server ends while a transaction holds it (a failover's primary shutting down,
 * an operator's pg_terminate_backend) must answer "retry later", never a 500. TypeORM releases a
 * query runner whose connection emits an error (typeorm's driver/postgres/PostgresQueryRunner.ts,
 * `connect`: the client's "error" listener calls `releasePostgresConnection`), so the statements
 * after it fail with TypeORM's own "already released" errors rather than PostgreSQL's; those must
 * be taken for what they are: a lost connection.
 */
describe('a transaction whose connection the server ends', () => {
  let url: string;
  let dataSource: DataSource;

  beforeAll(async () => {
    url = await createEmptyDatabase('connection_loss');
    dataSource = new DataSource(buildTypeOrmOptions({ DATABASE_URL: url, DATABASE_POOL_SIZE: 2 }));
    await dataSource.initialize();
  });

  afterAll(async () => {
    await dataSource?.destroy();
  });

  /** Ends the session behind `manager` from another one, and waits until TypeORM has seen it. */
  async function endSessionOf(manager: EntityManager): Promise<void> {
    const [{ pid }] = await manager.query<{ pid: number }[]>('SELECT pg_backend_pid() AS pid');
    await withClient(url, (client) => client.query('SELECT pg_terminate_backend($1)', [pid]));
    const runner = manager.queryRunner!;
    const deadline = Date.now() + 10_000;
    while (!runner.isReleased) {
      if (Date.now() > deadline) throw new Error('the ended session was never noticed');
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  it('fails its next statement, and the transaction, with an error taken for an unavailable database', async () => {
    let statement: unknown;
    const transaction = await dataSource
      .transaction(async (manager) => {
        await endSessionOf(manager);
        statement = await manager.query('SELECT 1').catch((error: unknown) => error);
        // The statement's error is what a handler would throw on; the commit fails the same way.
      })
      .catch((error: unknown) => error);
    expect(statement).toMatchObject({ name: 'QueryRunnerProviderAlreadyReleasedError' });
    expect(isDependencyUnavailable(statement)).toBe(true);
    expect(transaction).toMatchObject({ name: 'QueryRunnerAlreadyReleasedError' });
    expect(isDependencyUnavailable(transaction)).toBe(true);
  });

  it('leaves the pool serving: the next transaction runs on a new connection', async () => {
    await dataSource.transaction(async (manager) => endSessionOf(manager)).catch(() => undefined);
    await expect(dataSource.query('SELECT 1 AS one')).resolves.toEqual([{ one: 1 }]);
  });
});
