import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import {
  startProvisionerApps,
  ProvisionerTestApps,
  TEST_WRITE_KEY,
} from '../../../test/support/provisioner-app';
import {
  createTestBucket,
  listKeys,
  openUploads,
  PrivateS3Server,
  privateS3Server,
  removeTestBucket,
  testS3Client,
} from '../../../test/support/s3-server';
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

const MiB = 1024 * 1024;
/** Long enough (in 5 MiB parts) to be caught mid-upload when the server goes away. */
const SIZE = 96 * MiB;
/** A private Swift starts in ~5 s with its packages present; the rest is the import's backoff (5 s). */
const SERVER_START_MS = 90_000;
const IMPORT_MS = 90_000;

jest.setTimeout(2 * SERVER_START_MS + 2 * IMPORT_MS);

/**
 * The S3 server going away mid-import, on a Swift of this test's own (scripts/s3/swift-s3-server.sh
 * with its own directory and ports), so stopping it disturbs no other test using the shared one.
 */
describe('provisioner with STORAGE_BACKEND=s3: the S3 server stopped mid-import', () => {
  const dir = join(tempDir('swift-outage'), 'server');
  let server: PrivateS3Server;
  let client: S3Client;
  let bucket: string;
  let apps: ProvisionerTestApps | undefined;
  let dropzone: DropzoneFixture;

  beforeAll(async () => {
    server = await privateS3Server(dir, SERVER_START_MS);
    client = testS3Client(server);
    bucket = await createTestBucket(client, 'outage');
    dropzone = new DropzoneFixture(join(tempDir('e2e-s3-outage'), 'dropzone'));
    dropzone.submission('SUB-1', { project: 'PRJ1', datasets: ['DS-OUTAGE'] });
    dropzone.dataset('DS-OUTAGE', {
      submission: 'SUB-1',
      files: { 'small.txt': 'small' },
      manifestText: { sha256: '' },
    });
    writeSparseZeros(join(dropzone.datasetDir('DS-OUTAGE'), 'payload/big/zeros.bin'), SIZE);
    writeFileSync(
      join(dropzone.datasetDir('DS-OUTAGE'), 'manifest-sha256.txt'),
      `${zeroSha256(SIZE)}  big/zeros.bin\n${digest('sha256', 'small')}  small.txt\n`,
    );
    apps = await startProvisionerApps(
      await dropzoneEnv(dropzone, tempDir('unused'), {
        STORAGE_BACKEND: 's3',
        S3_ENDPOINT: server.endpoint,
        S3_REGION: server.region,
        S3_BUCKET: bucket,
        S3_PREFIX: 'research/',
        S3_FORCE_PATH_STYLE: 'true',
        S3_ACCESS_KEY_ID: server.accessKeyId,
        S3_SECRET_ACCESS_KEY: server.secretAccessKey,
        S3_PART_BYTES: String(5 * MiB),
      }),
    );
  });

  afterAll(async () => {
    await apps?.close();
    if (bucket) await removeTestBucket(client, bucket).catch(() => undefined);
    client?.destroy();
    // Stops every process of the private server and deletes its objects and configuration.
    if (server) server.script('reset');
  });

  it('is a transient fault: the import waits it out, completes once the server is back and publishes once', async () => {
    const api = apps!.api;
    const target = 'projects/PRJ1/SUB-1/data/raw/DS-OUTAGE';
    const res = await request(api.getHttpServer())
      .post('/datasets/dropzone/import')
      .set('X-API-Key', TEST_WRITE_KEY)
      .send({ dataset_id: 'DS-OUTAGE' });
    expect(res.status).toBe(202);
    await waitWhileCopying(
      api,
      res.body.id,
      (r) => r.state === 'running' && r.progress.bytes_done > 5 * MiB,
      IMPORT_MS,
    );

    // The S3 endpoint goes away: its proxy process is killed (the back ends keep the parts).
    const proxyPid = Number(readFileSync(join(dir, 'run/proxy.pid'), 'utf8'));
    process.kill(proxyPid, 'SIGKILL');
    const waiting = await waitForImport(
      api,
      res.body.id,
      ['queued', ...TERMINAL_STATES],
      IMPORT_MS,
    );
    // Retried, not failed: queued again, waiting out its backoff, saying why.
    expect(waiting).toMatchObject({ state: 'queued', attempts: 1 });
    expect(waiting.error).not.toBeNull();
    expect(waiting.error!.code).not.toBe('storage_refused');

    server.script('start');
    const done = await waitForImport(api, res.body.id, TERMINAL_STATES, IMPORT_MS);
    expect(done).toMatchObject({ state: 'imported', error: null, path: target });
    expect(done.attempts).toBeGreaterThanOrEqual(2);

    // Published once: exactly the dataset's objects, nothing left in staging or half uploaded.
    expect((await listKeys(client, bucket, `research/${target}/`)).sort()).toEqual(
      [
        '.provisioner/manifest-sha256.txt',
        '.provisioner/provenance.json',
        'big/zeros.bin',
        'small.txt',
      ].map((k) => `research/${target}/${k}`),
    );
    expect(await listKeys(client, bucket, 'research/.staging/')).toEqual([]);
    expect(await openUploads(client, bucket)).toEqual([]);
    const provenance = JSON.parse(
      Buffer.from(
        await (
          await client.send(
            new GetObjectCommand({
              Bucket: bucket,
              Key: `research/${target}/.provisioner/provenance.json`,
            }),
          )
        ).Body!.transformToByteArray(),
      ).toString(),
    );
    expect(provenance.import.attempt).toBe(done.attempts);
  });
});
