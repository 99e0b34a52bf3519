import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Cluster } from 'ioredis';
import request from 'supertest';
import { uniqueQueuePrefix } from '../../../test/support/databases';
import {
  startProvisionerApps,
  ProvisionerTestApps,
  TEST_WRITE_KEY,
} from '../../../test/support/provisioner-app';
import { metricSample } from '../../../test/support/prometheus-text';
import {
  RedisCluster,
  SentinelSet,
  startRedisCluster,
  startSentinelSet,
} from '../../../test/support/redis-servers';
import { poll } from '../../../test/support/wait';
import { DropzoneFixture, tempDir } from './support/dropzone-fixture';
import { waitForImport } from './support/provisioner-e2e';
import { redisTopology, sentinelDownAfterMs } from '../src/queue/redis-topology';

/**
 * The queue on Redis past one server, fast enough for every run: a Sentinel set (with passwords
 * on the Sentinels and on the data nodes) through a failover, and a Cluster. The faults under
 * load (20 imports, a killed primary, an outage past the import lock) are in
 * test/robustness/redis-sentinel-faults.robust-spec.ts.
 */
// Bounded by the waits inside (a failover up to 30 s, each import up to 25 s), on a loaded machine.
jest.setTimeout(150_000);

const DATASETS = ['DS-1', 'DS-2', 'DS-3'];

function dropzone(base: string): DropzoneFixture {
  const fixture = new DropzoneFixture(join(base, 'dropzone')).submission('SUB-1', {
    project: 'PRJ1',
    datasets: DATASETS,
  });
  for (const id of DATASETS)
    fixture.dataset(id, {
      submission: 'SUB-1',
      files: { 'a.txt': `${id} a\n`, 'b/c.txt': `${id} c\n` },
    });
  return fixture;
}

async function importDataset(apps: ProvisionerTestApps, id: string): Promise<string> {
  const res = await request(apps.api.getHttpServer())
    .post('/datasets/dropzone/import')
    .set('X-API-Key', TEST_WRITE_KEY)
    .send({ dataset_id: id });
  expect(res.status).toBe(202);
  return res.body.id as string;
}

const ready = (app: NestExpressApplication) =>
  request(app.getHttpServer())
    .get('/health/ready')
    .then((res) => res.status);

async function workerMetric(apps: ProvisionerTestApps, name: string): Promise<number | undefined> {
  const res = await request(apps.worker.getHttpServer()).get('/metrics');
  return metricSample(res.text, name, { queue: 'imports' });
}

describe('the queue on a Redis Sentinel set', () => {
  const base = tempDir('e2e-sentinel');
  let set: SentinelSet;
  let apps: ProvisionerTestApps;

  afterAll(async () => {
    await apps?.close();
    await set?.stop();
  });

  it('imports through the Sentinels, and after SENTINEL FAILOVER the worker takes the next job by itself', async () => {
    const password = randomBytes(12).toString('hex');
    const sentinelPassword = randomBytes(12).toString('hex');
    set = await startSentinelSet({ dir: join(base, 'redis'), password, sentinelPassword });
    const fixture = dropzone(base);
    apps = await startProvisionerApps({
      REDIS_SENTINELS: set.sentinels,
      REDIS_SENTINEL_NAME: set.name,
      REDIS_PASSWORD: password,
      REDIS_SENTINEL_PASSWORD: sentinelPassword,
      QUEUE_PREFIX: uniqueQueuePrefix(),
      SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: fixture.root }]),
      STORAGE_ROOT: join(base, 'storage'),
    });
    // What the worker compares IMPORT_LOCK_MS with at start (it warns when a failover outlasts it).
    expect(await sentinelDownAfterMs(redisTopology(apps.settings)!)).toBe(1000);
    const first = await waitForImport(apps.api, await importDataset(apps, 'DS-1'));
    expect(first.state).toBe('imported');

    const { from, to } = await set.failover();
    expect(to).not.toBe(from);
    const afterFailover = await waitForImport(
      apps.api,
      await poll(
        // The API fails fast while it reconnects (503): asked again until the new primary takes it.
        async () => {
          const res = await request(apps.api.getHttpServer())
            .post('/datasets/dropzone/import')
            .set('X-API-Key', TEST_WRITE_KEY)
            .send({ dataset_id: 'DS-2' });
          if (res.status === 202) return res.body.id as string;
          expect(res.status).toBe(503);
          return undefined;
        },
        'the API to queue an import on the new primary',
        20_000,
        100,
      ),
    );
    expect(afterFailover.state).toBe('imported');
    // Both processes are ready again, and the worker's metrics tell of the failover.
    await poll(
      async () => ((await ready(apps.api)) === 200 ? true : undefined),
      'the API ready',
      10_000,
      100,
    );
    await poll(
      async () => ((await ready(apps.worker)) === 200 ? true : undefined),
      'the worker ready',
      10_000,
      100,
    );
    expect(
      await workerMetric(apps, 'provisioner_queue_worker_disconnects_total'),
    ).toBeGreaterThanOrEqual(1);
    expect(await workerMetric(apps, 'provisioner_queue_worker_connected')).toBe(1);
    expect(
      await workerMetric(apps, 'provisioner_queue_worker_resume_seconds'),
    ).toBeGreaterThanOrEqual(0);
    const list = await request(apps.api.getHttpServer())
      .get('/imports')
      .set('X-API-Key', TEST_WRITE_KEY);
    expect((list.body.items as { key: string }[]).map((r) => r.key).sort()).toEqual([
      'DS-1',
      'DS-2',
    ]);
  });
});

describe('the queue on a Redis Cluster', () => {
  const base = tempDir('e2e-cluster');
  let cluster: RedisCluster;
  let apps: ProvisionerTestApps;

  afterAll(async () => {
    await apps?.close();
    await cluster?.stop();
  });

  it('imports and lists with every key of the queue under one hash tag', async () => {
    const password = randomBytes(12).toString('hex');
    cluster = await startRedisCluster({ dir: join(base, 'redis'), password });
    const fixture = dropzone(base);
    const prefix = uniqueQueuePrefix();
    apps = await startProvisionerApps({
      REDIS_CLUSTER_NODES: cluster.nodes,
      REDIS_PASSWORD: password,
      QUEUE_PREFIX: prefix,
      SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: fixture.root }]),
      STORAGE_ROOT: join(base, 'storage'),
    });
    const ids = await Promise.all(DATASETS.map((id) => importDataset(apps, id)));
    for (const id of ids) expect((await waitForImport(apps.api, id)).state).toBe('imported');
    const list = await request(apps.api.getHttpServer())
      .get('/imports?state=imported')
      .set('X-API-Key', TEST_WRITE_KEY);
    expect(list.body.count).toBe(DATASETS.length);
    // A wrong key is counted in the failure store, on the Cluster too.
    await request(apps.api.getHttpServer())
      .get('/imports')
      .set('X-API-Key', 'x'.repeat(40))
      .expect(401);

    const client = new Cluster([{ host: '127.0.0.1', port: cluster.ports[0] }], {
      redisOptions: { password },
    });
    try {
      await new Promise((done) => client.once('ready', done));
      const perNode = await Promise.all(
        client.nodes('master').map((node) => node.keys(`*${prefix}*`)),
      );
      const keys = perNode.flat();
      expect(keys.length).toBeGreaterThan(10);
      expect(keys.every((key) => key.startsWith(`{${prefix}}:`))).toBe(true);
      expect(keys.some((key) => key.startsWith(`{${prefix}}:auth:failures:`))).toBe(true);
      // One hash tag, one slot: every key on one node.
      expect(perNode.filter((k) => k.length > 0)).toHaveLength(1);
    } finally {
      client.disconnect();
    }
  });
});
