import { randomBytes } from 'node:crypto';
import { measureReplicaStaleness } from '../../../scripts/lib/replica-staleness';
import {
  AppProcess,
  startServiceProcess,
  stopServiceProcess,
} from '../../../test/support/app-process';
import { TEST_GLOBAL_KEY } from '../../../test/support/catalog-app';
import { createCatalogDatabase } from '../../../test/support/databases';
import { databaseEnv } from '../../../test/support/test-services';
import { PROCESS_START_MS } from '../../../test/support/timeouts';

const REPLICAS = 3;
const WRITES = 6;
/**
 * The bound a replica's staleness is held to: the version listener's heartbeat
 * (catalog-version-tracker.ts), which catches a write even if its notification were lost. A
 * notification normally brings it in milliseconds; `npm run bench` reports the percentiles.
 */
const STALENESS_BOUND_MS = 5_000;

/**
 * Three catalog processes on one database (behind the run's PgBouncer with TEST_PGBOUNCER=on):
 * each write through one replica is read by every other within the bound, through the read
 * cache and the fast-read index that would otherwise answer from memory.
 */
describe('catalog replicas: a write through one is read on every other', () => {
  const replicas: (AppProcess & { url: string })[] = [];

  beforeAll(async () => {
    const env = {
      ...databaseEnv(await createCatalogDatabase()),
      GLOBAL_API_KEY: TEST_GLOBAL_KEY,
      CATALOG_SOURCE: 'https://catalog.test',
      MIGRATIONS_RUN: 'false',
      DATABASE_POOL_SIZE: '2',
      LOG_LEVEL: 'warn',
    };
    replicas.push(
      ...(await Promise.all(
        Array.from({ length: REPLICAS }, () => startServiceProcess('catalog-api', 'src/main', env)),
      )),
    );
  }, PROCESS_START_MS);

  afterAll(async () => {
    await Promise.all(replicas.map(stopServiceProcess));
  });

  it(
    'within the heartbeat bound, on every replica, for every write',
    async () => {
      const samples = await measureReplicaStaleness({
        urls: replicas.map((r) => r.url),
        key: TEST_GLOBAL_KEY,
        writes: WRITES,
        intervalMs: 0,
        deadlineMs: STALENESS_BOUND_MS,
        tag: randomBytes(3).toString('hex'),
      });
      expect(samples).toHaveLength(WRITES * (REPLICAS - 1));
      for (const sample of samples) expect(sample.delayMs).toBeLessThan(STALENESS_BOUND_MS);
      // Every replica wrote and read: the round goes through each of them.
      expect(new Set(samples.map((s) => s.writer)).size).toBe(REPLICAS);
      expect(new Set(samples.map((s) => s.reader)).size).toBe(REPLICAS);
    },
    2 * WRITES * STALENESS_BOUND_MS,
  );
});
