import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { tempDir } from '../../apps/provisioner/test/support/dropzone-fixture';
import { PrivateRedis, startPrivateRedis } from '../../scripts/lib/private-redis';
import { TEST_WRITE_KEY } from '../support/provisioner-app';
import { eventually, sleep } from './support/load-loop';
import { finalPath, partialProblem, ProvisionerRig, startRig, writeDatasets } from './support/provisioner-rig';

const DATASETS = 8;
const BIG = 96 * 1024 * 1024;

/**
 * Eight imports queued at once, two running in a worker process, when the queue's Redis (a
 * private one, append-only file on, as in the compose file) is stopped for 3 s and started again:
 * no job may be lost and none run twice.
 */
describe('imports while Redis is restarted with jobs queued and running', () => {
  let rig: ProvisionerRig;
  let redis: PrivateRedis;
  const base = tempDir('robust-redis');
  const storage = join(base, 'storage');

  afterAll(async () => {
    await rig?.close();
    await redis?.stop();
    rmSync(base, { recursive: true, force: true });
  });

  it('finishes every import exactly once', async () => {
    const ids = writeDatasets(join(base, 'dropzone'), DATASETS, BIG);
    redis = await startPrivateRedis({ dir: join(base, 'redis') });
    rig = await startRig({
      REDIS_URL: redis.url,
      QUEUE_PREFIX: 'robust',
      SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: join(base, 'dropzone') }]),
      STORAGE_ROOT: storage,
      IMPORT_LOCK_MS: '5000',
      IMPORT_MAX_ATTEMPTS: '10',
      IMPORT_CONCURRENCY: '2',
    });
    await rig.startWorker();
    const queued = await Promise.all(ids.map((id) => rig.importDataset(id)));
    expect(queued.map((q) => q.status)).toEqual(ids.map(() => 202));
    const importIds = queued.map((q) => q.record.id);

    const running = await eventually(async () => {
      const records = await Promise.all(importIds.map((id) => rig.record(id)));
      return records.some((r) => r?.state === 'running' && r.progress.bytes_done > 0);
    }, 30_000);
    expect(running).toBe(true);
    const before = await Promise.all(importIds.map((id) => rig.record(id)));
    await redis.stop();
    await sleep(3000);
    redis = await startPrivateRedis({ dir: join(base, 'redis'), port: redis.port });

    const records = await rig.waitAllEnded(importIds, 180_000);
    process.stdout.write(
      `redis restart: states before the stop ${before.map((r) => r?.state).join(', ')}; attempts after ` +
        `${records.map((r) => r.attempts).join(', ')}\n`,
    );
    expect(records.map((r) => [r.key, r.state, r.error])).toEqual(ids.map((id) => [id, 'imported', null]));
    // One record per dataset (no second job for the same work), one published copy, no staging.
    const list = await request(rig.api.getHttpServer()).get('/imports').set('X-API-Key', TEST_WRITE_KEY);
    expect((list.body.items as { key: string }[]).map((r) => r.key).sort()).toEqual(ids);
    for (const id of ids) expect(partialProblem(storage, id, BIG)).toBeUndefined();
    expect(readdirSync(join(finalPath(storage, ids[0]), '..')).sort()).toEqual(ids);
    expect(readdirSync(join(storage, '.staging'))).toEqual([]);
  });
});
