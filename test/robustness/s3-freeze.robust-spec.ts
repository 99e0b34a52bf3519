import type { S3Client } from '@aws-sdk/client-s3';
import { join } from 'node:path';
import { DropzoneFixture, tempDir } from '../../apps/provisioner/test/support/dropzone-fixture';
import { createS3Client } from '../../apps/provisioner/src/common/s3/s3-client';
import { S3Storage } from '../../apps/provisioner/src/storage/s3/s3-storage';
import { StorageUnavailableError } from '../../apps/provisioner/src/storage/storage-system';
import type { ImportRecord } from '../../apps/provisioner/src/imports/import-record';
import request from 'supertest';
import { provisionerTestSettings, queueEnv, TEST_WRITE_KEY } from '../support/provisioner-app';
import {
  createTestBucket,
  listKeys,
  openUploads,
  removeTestBucket,
  s3StorageEnv,
  s3TestServer,
  testS3Client,
} from '../support/s3-server';
import { startTcpProxy, TcpProxy } from '../support/tcp-proxy';
import { poll } from '../support/wait';
import { ProvisionerRig, startRig } from './support/provisioner-rig';

const MiB = 1024 * 1024;
/** Long enough (in 5 MiB parts) that the freeze lands mid-upload. */
const SIZE = 160 * MiB;
/** Short time-outs, so that the fault shows in seconds (the defaults are 10 s, 5 min, 60 s). */
const TIMEOUTS = {
  S3_CONNECT_TIMEOUT_MS: '1000',
  S3_REQUEST_TIMEOUT_MS: '3000',
  S3_IDLE_TIMEOUT_MS: '1000',
};
/**
 * A frozen store costs a stuck request its idle time-out, three tries each (the SDK's), for
 * the upload and then for the clean-up of the attempt's staging: some 10 s; the bound leaves
 * room for a loaded machine.
 */
const FAIL_WITHIN_MS = 45_000;
const TARGET = 'projects/PRJ1/SUB-1/data/raw/DS-FROZEN';

/**
 * The S3 server frozen mid-import (a loopback proxy in front of the run's Swift stops
 * forwarding, as a stopped server process would): without time-outs the import stayed
 * `running` with no error for as long as the freeze lasted, its lock renewed all along.
 * With them the attempt fails as a transient fault, `storage_unavailable`, and is retried;
 * once the server answers again the import completes and publishes once.
 */
describe('the S3 server frozen mid-import', () => {
  let client: S3Client;
  let bucket: string;
  let proxy: TcpProxy;
  let rig: ProvisionerRig;
  let env: Record<string, string>;

  beforeAll(async () => {
    const server = await s3TestServer();
    client = testS3Client(server);
    bucket = await createTestBucket(client, 'freeze');
    proxy = await startTcpProxy(Number(new URL(server.endpoint).port));
    const dropzone = new DropzoneFixture(join(tempDir('robust-freeze'), 'dropzone'));
    dropzone
      .submission('SUB-1', { project: 'PRJ1', datasets: ['DS-FROZEN'] })
      .sparseDataset('DS-FROZEN', 'SUB-1', SIZE);
    env = {
      ...(await queueEnv('redis')),
      SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: dropzone.root }]),
      ...s3StorageEnv(
        { ...server, endpoint: `http://127.0.0.1:${proxy.port}` },
        bucket,
        'research/',
      ),
      S3_PART_BYTES: String(5 * MiB),
      ...TIMEOUTS,
    };
    rig = await startRig(env);
  });

  afterAll(async () => {
    await rig?.close();
    proxy?.thaw();
    await proxy?.close();
    if (bucket) await removeTestBucket(client, bucket).catch(() => undefined);
    client?.destroy();
  });

  it('fails the attempt as storage_unavailable (retried) within seconds, then imports once thawed', async () => {
    await rig.startWorker();
    const { status, record } = await rig.importDataset('DS-FROZEN');
    expect(status).toBe(202);
    const copying = await poll(
      async () => {
        const now = await rig.record(record.id);
        if (now?.state === 'imported') throw new Error('the copy finished before the freeze');
        return now?.state === 'running' && now.progress.bytes_done > 10 * MiB ? now : undefined;
      },
      'the upload to be under way',
      60_000,
      20,
    );
    proxy.freeze();
    const frozenAt = Date.now();
    expect(copying.progress.bytes_done).toBeLessThan(SIZE);

    // A route that reads storage meanwhile: 503 saying why, within its time-outs.
    const diff = await request(rig.api.getHttpServer())
      .get('/datasets/dropzone/diff')
      .set('X-API-Key', TEST_WRITE_KEY);
    expect({ status: diff.status, reason: diff.body.more?.reason }).toEqual({
      status: 503,
      reason: 'storage_unavailable',
    });

    const failed = await poll(
      async () => {
        const now = await rig.record(record.id);
        return now?.error ? now : undefined;
      },
      'the frozen attempt to fail',
      FAIL_WITHIN_MS,
      100,
    );
    const failedAfterMs = Date.now() - frozenAt;
    process.stdout.write(`s3 freeze: the attempt failed ${failedAfterMs} ms into the freeze\n`);
    expect(failed.error).toMatchObject({ code: 'storage_unavailable' });
    expect(failed.error!.message).toMatch(/timed out|requestTimeout/);
    // Retried, not failed: waiting out its backoff (or already in its next attempt).
    expect(['queued', 'running']).toContain(failed.state);

    proxy.thaw();
    const done = await poll(
      async () => {
        const now: ImportRecord | undefined = await rig.record(record.id);
        return now && ['imported', 'failed', 'rejected'].includes(now.state) ? now : undefined;
      },
      'the import to end once thawed',
      120_000,
      100,
    );
    expect(done).toMatchObject({ state: 'imported', error: null, path: TARGET });
    expect(done.attempts).toBeGreaterThanOrEqual(2);
    expect((await listKeys(client, bucket, `research/${TARGET}/`)).sort()).toEqual(
      DropzoneFixture.SPARSE_DATASET_OBJECTS.map((key) => `research/${TARGET}/${key}`),
    );
    // Nothing half uploaded, no staging record left.
    expect([
      ...(await openUploads(client, bucket)),
      ...(await listKeys(client, bucket, 'research/.staging/')),
    ]).toEqual([]);
  });

  it('a server that answers a byte at a time fails each request at its request time-out', async () => {
    const settings = provisionerTestSettings(env);
    const s3 = createS3Client({
      endpoint: settings.S3_ENDPOINT,
      region: settings.S3_REGION,
      forcePathStyle: true,
      credentials: {
        accessKeyId: settings.S3_ACCESS_KEY_ID!,
        secretAccessKey: settings.S3_SECRET_ACCESS_KEY!,
      },
      // The idle time-out far beyond the request's: a byte every 200 ms keeps a socket busy, but
      // on a loaded machine this process can pause a second between two, and the idle time-out
      // then fired first (not what this test is about).
      timeouts: { connectMs: 1000, requestMs: 3000, idleMs: 60_000 },
    });
    const storage = new S3Storage(s3, {
      bucket,
      prefix: 'research/',
      partBytes: 5 * MiB,
      uploadConcurrency: 1,
    });
    proxy.trickle(200);
    try {
      const started = Date.now();
      const outcome = await storage
        .readObject(`${TARGET}/small.txt`)
        .catch((error: unknown) => error);
      const tookMs = Date.now() - started;
      process.stdout.write(`s3 trickle: a read gave up after ${tookMs} ms\n`);
      expect(outcome).toBeInstanceOf(StorageUnavailableError);
      expect((outcome as Error).message).toContain('3000 ms requestTimeout');
      // Three tries of 3 s each, never the minutes a trickle could last.
      expect(tookMs).toBeLessThan(30_000);
    } finally {
      proxy.thaw();
      s3.destroy();
    }
  });
});
