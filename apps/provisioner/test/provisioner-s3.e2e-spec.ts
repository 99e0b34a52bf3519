import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import {
  provisionerTestSettings,
  startProvisionerApps,
  ProvisionerTestApps,
  TEST_READ_KEY,
  TEST_WRITE_KEY,
} from '../../../test/support/provisioner-app';
import {
  createTestBucket,
  listKeys,
  openUploads,
  removeTestBucket,
  s3StorageEnv,
  s3TestServer,
  S3TestServer,
  testS3Client,
} from '../../../test/support/s3-server';
import { describeRegistration } from '../src/storage-registration/registration-description';
import { IMPORTS_QUEUE } from '../src/imports/import.queue';
import { createProvisionerApiApp } from '../src/http-app';
import { createProvisionerWorkerApp } from '../src/worker-app';
import { storageFromSettings } from '../src/storage/storage.module';
import { digest, DropzoneFixture, tempDir } from './support/dropzone-fixture';
import {
  dropzoneEnv,
  TERMINAL_STATES,
  waitForImport,
  waitWhileCopying,
} from './support/provisioner-e2e';
import { startWorkerProcess, WORKER_START_MS } from './support/worker-process';

const MiB = 1024 * 1024;
const BIG = randomBytes(12 * MiB + 7);
const FILES: Record<string, string | Buffer> = {
  'reads/big.bin': BIG,
  'README.txt': 'about this dataset\n',
  'empty.dat': '',
};
const PATH = (id: string) => `projects/PRJ1/SUB-1/data/raw/${id}`;
/** A large sparse file: long enough to be caught mid-upload. */
const CRASH_SIZE = 192 * MiB;
const COPY_WAIT_MS = 120_000;
/**
 * A path within the payload rules (255 bytes a segment, 4,000 a path) whose S3 key, with the
 * prefix and the layout, is over S3's 1,024 bytes: 5 segments of 240, then x.txt (1,210 bytes).
 */
const LONG_PATH = `${Array.from({ length: 5 }, (_, i) => `${i}${'k'.repeat(239)}`).join('/')}/x.txt`;

jest.setTimeout(2 * WORKER_START_MS + 2 * COPY_WAIT_MS);

/** The provisioner (API + worker) importing a drop zone into Swift's S3 API. */
describe('provisioner with STORAGE_BACKEND=s3 (Swift s3api)', () => {
  let server: S3TestServer;
  let client: S3Client;
  let bucket: string;
  let dropzone: DropzoneFixture;
  let s3: ProvisionerTestApps;
  let fs: ProvisionerTestApps;
  let s3AppEnv: Record<string, string>;
  const opened: { close(): Promise<void> }[] = [];
  const workers: ChildProcess[] = [];

  const s3Env = (secret = server.secretAccessKey): Record<string, string> => ({
    ...s3StorageEnv(server, bucket, 'research/', secret),
    S3_PART_BYTES: String(5 * MiB),
  });
  const get = (api: NestExpressApplication, path: string) =>
    request(api.getHttpServer()).get(path).set('X-API-Key', TEST_READ_KEY);
  const post = (api: NestExpressApplication, path: string, body: object) =>
    request(api.getHttpServer()).post(path).set('X-API-Key', TEST_WRITE_KEY).send(body);
  const object = async (path: string) =>
    Buffer.from(
      await (
        await client.send(new GetObjectCommand({ Bucket: bucket, Key: `research/${path}` }))
      ).Body!.transformToByteArray(),
    );

  beforeAll(async () => {
    server = await s3TestServer();
    client = testS3Client(server);
    bucket = await createTestBucket(client, 'imports');
    const base = tempDir('e2e-s3');
    dropzone = new DropzoneFixture(join(base, 'dropzone'));
    dropzone.submission('SUB-1', {
      project: 'PRJ1',
      datasets: ['DS-GOOD', 'DS-REFUSED', 'DS-CRASH', 'DS-LONGKEY', 'DS-LATEKEY'],
    });
    dropzone.dataset('DS-GOOD', {
      submission: 'SUB-1',
      files: FILES,
      manifests: ['sha256', 'md5'],
    });
    dropzone.dataset('DS-REFUSED', { submission: 'SUB-1', files: { 'a.txt': 'a' } });
    dropzone.dataset('DS-LONGKEY', {
      submission: 'SUB-1',
      files: { 'a.txt': 'a', [LONG_PATH]: 'deep' },
    });
    dropzone.dataset('DS-LATEKEY', { submission: 'SUB-1', files: { 'a.txt': 'a' } });
    dropzone.sparseDataset('DS-CRASH', 'SUB-1', CRASH_SIZE);
    s3AppEnv = await dropzoneEnv(dropzone, join(base, 'unused'), s3Env());
    s3 = await startProvisionerApps(s3AppEnv);
    fs = await startProvisionerApps(await dropzoneEnv(dropzone, join(base, 'storage')));
    opened.push(s3, fs);
  });

  afterAll(async () => {
    for (const worker of workers) if (worker.exitCode === null) worker.kill('SIGKILL');
    for (const app of opened) await app.close();
    if (bucket) await removeTestBucket(client, bucket);
    client?.destroy();
  });

  it('imports into the bucket: every byte as sent, the commit object last, the same answers as the filesystem', async () => {
    const [intoS3, intoFs] = await Promise.all(
      [s3, fs].map(async (apps) => {
        const res = await post(apps.api, '/datasets/dropzone/import', { dataset_id: 'DS-GOOD' });
        expect(res.status).toBe(202);
        // Sized like the other copies here: two apps import at once on a busy machine.
        return waitForImport(apps.api, res.body.id, TERMINAL_STATES, COPY_WAIT_MS);
      }),
    );
    expect(intoS3).toMatchObject({
      state: 'imported',
      attempts: 1,
      error: null,
      path: PATH('DS-GOOD'),
    });
    expect(intoS3.progress).toEqual(intoFs.progress);

    for (const [path, content] of Object.entries(FILES))
      expect(digest('sha256', await object(`${PATH('DS-GOOD')}/${path}`))).toBe(
        digest('sha256', content),
      );
    const head = await client.send(
      new HeadObjectCommand({ Bucket: bucket, Key: `research/${PATH('DS-GOOD')}/reads/big.bin` }),
    );
    expect(head).toMatchObject({ ContentLength: BIG.length, ETag: expect.stringMatching(/-3"$/) });
    // The SHA-256 of each object is kept in the commit object (and the stored manifest).
    const provenance = JSON.parse(
      (await object(`${PATH('DS-GOOD')}/.provisioner/provenance.json`)).toString(),
    );
    expect(provenance.files).toContainEqual(
      expect.objectContaining({
        path: 'reads/big.bin',
        size: BIG.length,
        sha256: digest('sha256', BIG),
      }),
    );
    expect(
      (await object(`${PATH('DS-GOOD')}/.provisioner/manifest-sha256.txt`)).toString(),
    ).toContain(`${digest('sha256', BIG)}  reads/big.bin`);
    expect(JSON.parse((await object('projects/PRJ1/SUB-1/submission.json')).toString()).ref).toBe(
      'SUB-1',
    );
    expect(await listKeys(client, bucket, 'research/.staging/')).toEqual([]);
    expect(await openUploads(client, bucket)).toEqual([]);

    for (const route of [
      '/datasets/dropzone',
      '/datasets/dropzone/diff',
      '/submissions/dropzone',
      '/submissions/dropzone/diff',
    ]) {
      const [a, b] = await Promise.all([get(s3.api, route), get(fs.api, route)]);
      expect({ route, status: a.status, body: a.body }).toEqual({
        route,
        status: b.status,
        body: b.body,
      });
    }

    // The catalog registration names the copy by its s3:// URL.
    const registration = await describeRegistration(
      storageFromSettings(s3.settings),
      intoS3.id,
      intoS3.path,
      'object-store',
      '2026-11-23',
    );
    // With the copy's bytes and its stored manifest's SHA-256: the same as the filesystem copy's.
    const manifest = await object(`${PATH('DS-GOOD')}/.provisioner/manifest-sha256.txt`);
    expect(registration.storage).toEqual({
      platform: 'object-store',
      location: `s3://${bucket}/research/${PATH('DS-GOOD')}`,
      bytes: Object.values(FILES).reduce((sum, content) => sum + Buffer.byteLength(content), 0),
      manifest_sha256: digest('sha256', manifest),
    });
    const onFilesystem = await describeRegistration(
      storageFromSettings(fs.settings),
      intoFs.id,
      intoFs.path,
      'hpc',
      '2026-11-23',
    );
    expect(onFilesystem.storage).toMatchObject({
      bytes: registration.storage.bytes,
      manifest_sha256: registration.storage.manifest_sha256,
    });
  });

  it('a refused credential fails the import at once (rejected, not retried) and readiness says why', async () => {
    // The API (which only reads) has the right key, the worker a refused one.
    const env = await dropzoneEnv(dropzone, tempDir('unused'), s3Env());
    const api = await createProvisionerApiApp(provisionerTestSettings(env));
    await api.init();
    opened.push(api);
    const worker = await createProvisionerWorkerApp(
      provisionerTestSettings({ ...env, S3_SECRET_ACCESS_KEY: 'not-the-secret' }),
    );
    await worker.init();
    opened.push(worker);
    const ready = await get(worker, '/health/ready');
    expect(ready.status).toBe(503);
    expect(JSON.stringify(ready.body)).toContain('credential was refused');

    const res = await post(api, '/datasets/dropzone/import', { dataset_id: 'DS-REFUSED' });
    expect(res.status).toBe(202);
    const record = await waitForImport(api, res.body.id);
    expect(record).toMatchObject({
      state: 'rejected',
      attempts: 1,
      error: { code: 'storage_refused' },
    });
  });

  it('a refused credential: every route that reads storage answers 503 saying why, and queues nothing', async () => {
    const env = await dropzoneEnv(dropzone, tempDir('unused'), s3Env('not-the-secret'));
    const api = await createProvisionerApiApp(provisionerTestSettings(env));
    await api.init();
    opened.push(api);
    const routes: [string, () => request.Test][] = [
      ['GET /submissions', () => get(api, '/submissions/dropzone')],
      ['GET /submissions diff', () => get(api, '/submissions/dropzone/diff')],
      ['GET /datasets', () => get(api, '/datasets/dropzone')],
      ['GET /datasets diff', () => get(api, '/datasets/dropzone/diff')],
      ['GET /datasets diff of one', () => get(api, '/datasets/dropzone/diff?submission=SUB-1')],
      ['GET /imports/<id> (no job)', () => get(api, '/imports/dropzone-dataset-DS-GOOD')],
      [
        'POST dataset import',
        () => post(api, '/datasets/dropzone/import', { dataset_id: 'DS-GOOD' }),
      ],
      [
        'POST submission import',
        () => post(api, '/submissions/dropzone/import', { submission: 'SUB-1' }),
      ],
    ];
    for (const [route, call] of routes) {
      const res = await call();
      expect({ route, status: res.status, body: res.body }).toMatchObject({
        route,
        status: 503,
        body: {
          status: 'Error',
          description: expect.stringContaining(`s3 bucket ${bucket} refused the request`),
          more: { reason: 'storage_refused' },
        },
      });
    }
    const queued = await get(api, '/imports');
    expect(queued.body.items).toEqual([]);
  });

  it('refuses a file whose S3 key would pass 1,024 bytes, naming it: at the request, and at preflight', async () => {
    expect(Buffer.byteLength(LONG_PATH)).toBe(1210);
    const refused = await post(s3.api, '/datasets/dropzone/import', { dataset_id: 'DS-LONGKEY' });
    expect(refused.status).toBe(409);
    expect(refused.body.more).toMatchObject({
      reason: 'key_too_long',
      problems: [
        {
          code: 'key_too_long',
          path: LONG_PATH,
          message: expect.stringContaining('over the 1024 the store allows'),
        },
      ],
    });
    expect(refused.body.description).toContain(LONG_PATH);
    // The filesystem has no such limit.
    expect(
      (await post(fs.api, '/datasets/dropzone/import', { dataset_id: 'DS-LONGKEY' })).status,
    ).toBe(202);

    // A file that appears after the request passed: preflight names it, and nothing is retried.
    const queue = s3.api.get<Queue>(getQueueToken(IMPORTS_QUEUE));
    await queue.pause();
    let res;
    try {
      res = await post(s3.api, '/datasets/dropzone/import', { dataset_id: 'DS-LATEKEY' });
      expect(res.status).toBe(202);
      const dir = dropzone.datasetDir('DS-LATEKEY');
      mkdirSync(dirname(join(dir, 'payload', LONG_PATH)), { recursive: true });
      writeFileSync(join(dir, 'payload', LONG_PATH), 'deep');
      appendFileSync(
        join(dir, 'manifest-sha256.txt'),
        `${digest('sha256', 'deep')}  ${LONG_PATH}\n`,
      );
    } finally {
      await queue.resume();
    }
    const record = await waitForImport(s3.api, res.body.id);
    expect(record).toMatchObject({ state: 'rejected', attempts: 1 });
    // A record cuts each text of a problem at 300 characters: the path is named by its start.
    expect(record.error!.details).toContainEqual({
      code: 'key_too_long',
      path: expect.stringContaining(LONG_PATH.slice(0, 250)),
      message: expect.stringMatching(/^its object key would be \d+ bytes, over the 1024/),
    });
    expect(await listKeys(client, bucket, `research/${PATH('DS-LATEKEY')}/`)).toEqual([]);
  });

  it('a worker killed mid-upload: the retry publishes once and leaves no multipart upload behind', async () => {
    await s3.worker.close();
    opened.splice(opened.indexOf(s3), 1, { close: () => s3.api.close() });
    // The worker as its own process (on the same queue), so it can be killed like a crashed pod.
    // A 5 s lock: the killed worker's job is taken back once it lapses, and a loaded machine
    // still renews it in time (a 2 s lock lapsed under load 30 and the job counted as stalled).
    const workerEnv = { ...s3AppEnv, IMPORT_LOCK_MS: '5000' };
    workers.push(await startWorkerProcess(workerEnv));
    const target = PATH('DS-CRASH');
    const storage = storageFromSettings(s3.settings);
    const res = await post(s3.api, '/datasets/dropzone/import', { dataset_id: 'DS-CRASH' });
    expect(res.status).toBe(202);
    const copying = await waitWhileCopying(
      s3.api,
      res.body.id,
      (r) => r.state === 'running' && r.progress.bytes_done > 20 * MiB,
      COPY_WAIT_MS,
    );
    expect(copying.progress.bytes_done).toBeLessThan(CRASH_SIZE);
    workers[0].kill('SIGKILL');
    await new Promise((r) => workers[0].once('exit', r));
    expect(await storage.exists(target)).toBe(false);
    const listed = (await get(s3.api, '/datasets/dropzone')).body.items;
    expect(listed).toContainEqual(
      expect.objectContaining({ dataset_id: 'DS-CRASH', imported: false }),
    );
    expect(await openUploads(client, bucket)).toEqual([`research/${target}/big/zeros.bin`]);

    workers.push(await startWorkerProcess(workerEnv));
    const done = await waitForImport(s3.api, res.body.id, TERMINAL_STATES, COPY_WAIT_MS);
    expect(done).toMatchObject({ state: 'imported', error: null });
    expect(done.attempts).toBeGreaterThanOrEqual(2);
    expect(await openUploads(client, bucket)).toEqual([]);
    expect(await listKeys(client, bucket, 'research/.staging/')).toEqual([]);
    expect((await listKeys(client, bucket, `research/${target}/`)).sort()).toEqual(
      DropzoneFixture.SPARSE_DATASET_OBJECTS.map((k) => `research/${target}/${k}`),
    );
    const provenance = JSON.parse(
      (await object(`${target}/.provisioner/provenance.json`)).toString(),
    );
    expect(provenance.import.attempt).toBe(done.attempts);
    const head = await client.send(
      new HeadObjectCommand({ Bucket: bucket, Key: `research/${target}/big/zeros.bin` }),
    );
    expect(head.ContentLength).toBe(CRASH_SIZE);
  });
});
