import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
  s3TestServer,
  S3TestServer,
  testS3Client,
} from '../../../test/support/s3-server';
import { describeRegistration } from '../src/storage-registration/registration-description';
import { createProvisionerApiApp, createProvisionerWorkerApp } from '../src/http-app';
import { storageFromSettings } from '../src/storage/storage.module';
import {
  digest,
  DropzoneFixture,
  tempDir,
  writeSparseZeros,
  zeroSha256,
} from './support/dropzone-fixture';
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
    STORAGE_BACKEND: 's3',
    S3_ENDPOINT: server.endpoint,
    S3_REGION: server.region,
    S3_BUCKET: bucket,
    S3_PREFIX: 'research/',
    S3_FORCE_PATH_STYLE: 'true',
    S3_ACCESS_KEY_ID: server.accessKeyId,
    S3_SECRET_ACCESS_KEY: secret,
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
      datasets: ['DS-GOOD', 'DS-REFUSED', 'DS-CRASH'],
    });
    dropzone.dataset('DS-GOOD', {
      submission: 'SUB-1',
      files: FILES,
      manifests: ['sha256', 'md5'],
    });
    dropzone.dataset('DS-REFUSED', { submission: 'SUB-1', files: { 'a.txt': 'a' } });
    dropzone.dataset('DS-CRASH', {
      submission: 'SUB-1',
      files: { 'small.txt': 'small' },
      manifestText: { sha256: '' },
    });
    writeSparseZeros(join(dropzone.datasetDir('DS-CRASH'), 'payload/big/zeros.bin'), CRASH_SIZE);
    writeFileSync(
      join(dropzone.datasetDir('DS-CRASH'), 'manifest-sha256.txt'),
      `${zeroSha256(CRASH_SIZE)}  big/zeros.bin\n${digest('sha256', 'small')}  small.txt\n`,
    );
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

  it('a worker killed mid-upload: the retry publishes once and leaves no multipart upload behind', async () => {
    await s3.worker.close();
    opened.splice(opened.indexOf(s3), 1, { close: () => s3.api.close() });
    // The worker as its own process (on the same queue), so it can be killed like a crashed pod.
    const workerEnv = { ...s3AppEnv, IMPORT_LOCK_MS: '2000' };
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
      [
        '.provisioner/manifest-sha256.txt',
        '.provisioner/provenance.json',
        'big/zeros.bin',
        'small.txt',
      ].map((k) => `research/${target}/${k}`),
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
