import { join } from 'node:path';
import request from 'supertest';
import { startPrivatePgBouncer, PrivatePgBouncer } from '../../../scripts/lib/private-pgbouncer';
import { startAppProcess } from '../../../test/support/app-process';
import { createEmptyDatabase, uniqueQueuePrefix } from '../../../test/support/databases';
import { startProvisionerApps, TEST_WRITE_KEY } from '../../../test/support/provisioner-app';
import { testServices } from '../../../test/support/test-services';
import { APP_START_MS, PROCESS_START_MS } from '../../../test/support/timeouts';
import { PostgresSessionRepository } from '@app/platform';
import { DropzoneFixture, tempDir } from './support/dropzone-fixture';
import { IMPORT_WAIT_MS, waitForImport } from './support/provisioner-e2e';

/**
 * BullMQ's PostgreSQL backend behind PgBouncer (Debian's pgbouncer, started here): its workers
 * wait on a LISTEN (taskforcesh/bullmq, docs/gitbook/guide/postgresql.md, "How it works"), which
 * a transaction-mode pooler breaks, so the provisioner refuses one and uses DATABASE_DIRECT_URL.
 */
describe('the PostgreSQL queue backend behind PgBouncer', () => {
  let transactionMode: PrivatePgBouncer;
  let sessionMode: PrivatePgBouncer;
  let database: string;
  const through = (pooler: PrivatePgBouncer) => `${pooler.serverUrl}${new URL(database).pathname}`;

  beforeAll(async () => {
    const postgresServerUrl = testServices().postgresServerUrl;
    [transactionMode, sessionMode] = await Promise.all(
      (['transaction', 'session'] as const).map((poolMode) =>
        startPrivatePgBouncer({
          postgresServerUrl,
          poolMode,
        }),
      ),
    );
    database = await createEmptyDatabase('queue');
  });
  afterAll(async () => {
    await transactionMode?.stop();
    await sessionMode?.stop();
  });

  it('tells a transaction-mode pooler from a connection that keeps its session', async () => {
    expect(await new PostgresSessionRepository(database).keepsSessions()).toBe(true);
    expect(await new PostgresSessionRepository(through(sessionMode)).keepsSessions()).toBe(true);
    expect(await new PostgresSessionRepository(through(transactionMode)).keepsSessions()).toBe(
      false,
    );
  });

  it(
    'refuses to start on a transaction-mode pooler, in one line naming what to set',
    async () => {
      const worker = startAppProcess('provisioner', 'src/worker', {
        DATABASE_URL: through(transactionMode),
        QUEUE_PREFIX: uniqueQueuePrefix(),
        LOG_LEVEL: 'silent',
      });
      const { code } = await worker.exited;
      expect(code).toBe(1);
      const lines = worker
        .output()
        .split('\n')
        .filter((line) => line.trim() !== '' && !line.startsWith('npm warn'));
      expect(lines).toEqual([
        expect.stringMatching(
          /^the PostgreSQL queue backend needs a session .*pooler in transaction mode.*DATABASE_DIRECT_URL.*REDIS_URL$/,
        ),
      ]);
    },
    PROCESS_START_MS,
  );

  it(
    'runs on DATABASE_DIRECT_URL when DATABASE_URL names the pooler',
    async () => {
      const dropzone = new DropzoneFixture(join(tempDir('e2e-pooler'), 'dropzone'));
      dropzone
        .submission('SUB-1', { project: 'PRJ1', datasets: ['DS-1'] })
        .dataset('DS-1', { submission: 'SUB-1', files: { 'a.txt': 'a' } });
      const apps = await startProvisionerApps({
        DATABASE_URL: through(transactionMode),
        DATABASE_DIRECT_URL: database,
        QUEUE_PREFIX: uniqueQueuePrefix(),
        SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: dropzone.root }]),
        STORAGE_ROOT: join(dropzone.root, '../storage'),
      });
      try {
        const res = await request(apps.api.getHttpServer())
          .post('/datasets/dropzone/import')
          .set('X-API-Key', TEST_WRITE_KEY)
          .send({ dataset_id: 'DS-1' })
          .expect(202);
        expect(await waitForImport(apps.api, res.body.id)).toMatchObject({ state: 'imported' });
      } finally {
        await apps.close();
      }
    },
    APP_START_MS + IMPORT_WAIT_MS,
  );
});
