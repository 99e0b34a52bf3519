import { S3Client } from '@aws-sdk/client-s3';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import {
  queueEnv,
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
import { S3Bucket } from '../src/storage/s3/s3-bucket';
import { storageFromSettings } from '../src/storage/storage.module';
import { digest, tempDir } from './support/dropzone-fixture';
import { TERMINAL_STATES, waitForImport, waitForRecordedFiles } from './support/provisioner-e2e';
import { S3InboxFixture } from './support/s3-inbox-fixture';
import { startWorkerProcess, WORKER_START_MS } from './support/worker-process';

const MiB = 1024 * 1024;
const BIG = randomBytes(12 * MiB + 3);
const FILES: Record<string, string | Buffer> = {
  'reads/big.bin': BIG,
  'README.txt': 'about this dataset\n',
  'empty.dat': '',
  'deep/er/names with spaces & ü.txt': 'unicode and spaces are fine\n',
};
const PATH = (id: string) => `projects/PRJ1/SUB-1/data/raw/${id}`;
/**
 * Files of the dataset a worker is killed in: enough that some are recorded before the kill. The
 * copy must outlast the journal's interval of a second (RECORD_INTERVAL_MS) on a quiet machine:
 * 32 objects of 2 MiB were sometimes published before a listing saw the journal. Many objects
 * rather than large ones: each costs the store a request either way, and the test holds them all.
 */
const CRASH_FILES = Object.fromEntries(
  Array.from({ length: 160 }, (_, i) => [
    `part-${String(i).padStart(3, '0')}.bin`,
    randomBytes(MiB),
  ]),
);
const COPY_WAIT_MS = 120_000;

jest.setTimeout(2 * WORKER_START_MS + 3 * COPY_WAIT_MS);

/**
 * The provisioner importing from an S3 inbox (SOURCES type s3) on Swift's S3 API, into a
 * filesystem and into S3 storage on the same store (server-side copies), through its routes.
 */
describe('S3 inbox source (Swift s3api)', () => {
  let server: S3TestServer;
  let client: S3Client;
  let inboxBucket: string;
  let storageBucket: string;
  let inbox: S3InboxFixture;
  let fs: ProvisionerTestApps;
  let storageRoot: string;
  const opened: { close(): Promise<void> }[] = [];
  const workers: ChildProcess[] = [];

  const get = (api: NestExpressApplication, path: string) =>
    request(api.getHttpServer()).get(path).set('X-API-Key', TEST_READ_KEY);
  const post = (api: NestExpressApplication, path: string, body: object) =>
    request(api.getHttpServer()).post(path).set('X-API-Key', TEST_WRITE_KEY).send(body);
  const importDataset = async (apps: ProvisionerTestApps, id: string, wait = 60_000) => {
    const res = await post(apps.api, '/datasets/inbox/import', { dataset_id: id });
    expect(res.status).toBe(202);
    return waitForImport(apps.api, res.body.id, TERMINAL_STATES, wait);
  };
  /** Apps importing from the inbox into S3 storage under a prefix of their own. */
  const s3Apps = async (extra: Record<string, unknown> = {}) => {
    const prefix = `research-${opened.length}/`;
    const env = {
      ...(await queueEnv()),
      SOURCES: JSON.stringify([inbox.source('inbox', extra)]),
      ...s3StorageEnv(server, storageBucket, prefix),
      S3_PART_BYTES: String(5 * MiB),
    };
    const apps = await startProvisionerApps(env);
    opened.push(apps);
    return { apps, env, prefix };
  };

  beforeAll(async () => {
    server = await s3TestServer();
    client = testS3Client(server);
    inboxBucket = await createTestBucket(client, 'inbox');
    storageBucket = await createTestBucket(client, 'inbox-storage');
    inbox = new S3InboxFixture(server, client, inboxBucket, 'deposits/');
    const { local } = inbox;
    local.submission('SUB-1', {
      project: 'PRJ1',
      datasets: ['DS-GOOD', 'DS-MD5', 'DS-WAITING', 'DS-MISSING', 'DS-NAMES', 'DS-ABSENT'],
    });
    local.submission('SUB-2', { project: 'PRJ1', status: 'draft', datasets: ['DS-DRAFT'] });
    local.submission('SUB-CRASH', { project: 'PRJ1', datasets: ['DS-CRASH'] });
    local.dataset('DS-GOOD', { submission: 'SUB-1', files: FILES });
    local.dataset('DS-MD5', { submission: 'SUB-1', files: FILES, manifests: ['sha256', 'md5'] });
    local.dataset('DS-WAITING', { submission: 'SUB-1', files: { 'a.txt': 'a' }, ready: false });
    local.dataset('DS-MISSING', {
      submission: 'SUB-1',
      files: { 'a.txt': 'a' },
      manifestText: {
        sha256: `${digest('sha256', 'a')}  a.txt\n${digest('sha256', 'b')}  b.txt\n`,
      },
    });
    local.dataset('DS-NAMES', { submission: 'SUB-1', files: { 'ok.txt': 'ok' } });
    local.dataset('DS-DRAFT', { submission: 'SUB-2', files: { 'a.txt': 'a' } });
    local.dataset('DS-CRASH', { submission: 'SUB-CRASH', files: CRASH_FILES });
    await inbox.upload();
    // Keys a directory could not hold, or the drop zone refuses: each a problem of the import.
    for (const key of ['a//b.txt', './dot.txt', 'x/../y.txt', '.provisioner', 'tab\there.txt'])
      await inbox.put(`datasets/DS-NAMES/payload/${key}`, 'refused');
    // A console's folder placeholder is no file.
    await inbox.put('datasets/DS-NAMES/payload/folder/', '');
    storageRoot = tempDir('s3-inbox-storage');
    fs = await startProvisionerApps({
      ...(await queueEnv()),
      SOURCES: JSON.stringify([inbox.source()]),
      STORAGE_ROOT: storageRoot,
    });
    opened.push(fs);
  });

  afterAll(async () => {
    for (const worker of workers) if (worker.exitCode === null) worker.kill('SIGKILL');
    for (const app of opened) await app.close();
    if (inboxBucket) await removeTestBucket(client, inboxBucket);
    if (storageBucket) await removeTestBucket(client, storageBucket);
    client?.destroy();
  });

  it('lists submissions and datasets with the drop zone’s reasons, and diffs against storage', async () => {
    const submissions = (await get(fs.api, '/submissions/inbox')).body.items;
    expect(submissions.map((s: { ref: string; eligible: boolean }) => [s.ref, s.eligible])).toEqual(
      [
        ['SUB-1', true],
        ['SUB-2', false],
        ['SUB-CRASH', true],
      ],
    );
    const datasets = (await get(fs.api, '/datasets/inbox')).body.items as {
      dataset_id: string;
      ready: boolean;
      file_count: number | null;
      byte_size: number | null;
      reason?: string | null;
    }[];
    const byId = new Map(datasets.map((d) => [d.dataset_id, d]));
    expect(byId.get('DS-GOOD')).toMatchObject({
      ready: true,
      file_count: 4,
      byte_size: Object.values(FILES).reduce((n, c) => n + Buffer.byteLength(c), 0),
    });
    expect(byId.get('DS-DRAFT')).toMatchObject({ ready: false, imported: false });
    const diff = async () =>
      new Map(
        ((await get(fs.api, '/datasets/inbox/diff')).body.items as typeof datasets).map((d) => [
          d.dataset_id,
          d,
        ]),
      );
    const before = await diff();
    expect(before.get('DS-GOOD')).toMatchObject({ ready: true, reason: null });
    expect(before.get('DS-WAITING')).toMatchObject({ ready: false, reason: 'marker_missing' });
    expect(before.get('DS-MISSING')).toMatchObject({
      ready: false,
      reason: 'files_missing',
      reason_detail: '1 manifest path(s) do not exist, e.g. b.txt',
    });
    expect(before.get('DS-ABSENT')).toMatchObject({ ready: false, reason: 'not_delivered' });
    // Only eligible submissions' datasets are to import.
    expect(before.has('DS-DRAFT')).toBe(false);

    const record = await importDataset(fs, 'DS-GOOD');
    expect(record).toMatchObject({ state: 'imported', error: null });
    for (const [path, content] of Object.entries(FILES))
      expect(
        readFileSync(join(storageRoot, PATH('DS-GOOD'), path)).equals(Buffer.from(content)),
      ).toBe(true);
    expect((await diff()).has('DS-GOOD')).toBe(false);
    // A dataset not ready is refused like the drop zone's, with why.
    const waiting = await post(fs.api, '/datasets/inbox/import', { dataset_id: 'DS-WAITING' });
    expect(waiting.status).toBe(409);
    expect(JSON.stringify(waiting.body)).toContain('marker_missing');
  });

  it('refuses keys the drop zone would refuse, naming each one', async () => {
    const record = await importDataset(fs, 'DS-NAMES');
    expect(record).toMatchObject({ state: 'rejected', error: { code: 'preflight_failed' } });
    const codes = (record.error!.details as { code: string; path?: string }[]).map((d) => [
      d.code,
      d.path,
    ]);
    expect(codes).toEqual(
      expect.arrayContaining([
        ['empty_segment', 'a//b.txt'],
        ['dot_segment', './dot.txt'],
        ['dot_segment', 'x/../y.txt'],
        ['reserved_name', '.provisioner'],
        ['control_character', 'tab\\x09here.txt'],
      ]),
    );
    expect(codes.map(([code]) => code)).not.toContain('extra_file');
    expect(await storageFromSettings(fs.settings).exists(PATH('DS-NAMES'))).toBe(false);
  });

  it('into S3 storage on the same store: copied server-side, every byte still hashed', async () => {
    const copies = jest.spyOn(S3Bucket.prototype, 'copyFrom');
    try {
      const { apps: serverSide } = await s3Apps();
      const record = await importDataset(serverSide, 'DS-MD5');
      expect(record).toMatchObject({ state: 'imported', error: null });
      // The 12 MiB file by UploadPartCopy parts of 5 MiB; the small ones are uploaded from the
      // bytes read to hash them (SERVER_SIDE_COPY_FROM).
      expect(copies.mock.calls.map(([key]) => key)).toEqual([
        expect.stringMatching(/\/reads\/big\.bin$/),
      ]);
      const storage = storageFromSettings(serverSide.settings);
      for (const [path, content] of Object.entries(FILES))
        expect(
          (await storage.readObject(`${PATH('DS-MD5')}/${path}`))!.equals(Buffer.from(content)),
        ).toBe(true);
      expect(await openUploads(client, storageBucket)).toEqual([]);

      copies.mockClear();
      const { apps: uploaded } = await s3Apps({ server_side_copy: false });
      expect(await importDataset(uploaded, 'DS-MD5')).toMatchObject({ state: 'imported' });
      expect(copies).not.toHaveBeenCalled();
      const byUpload = storageFromSettings(uploaded.settings);
      expect((await byUpload.readObject(`${PATH('DS-MD5')}/reads/big.bin`))!.equals(BIG)).toBe(
        true,
      );
    } finally {
      copies.mockRestore();
    }
  });

  it('a worker killed mid-import: the next attempt keeps what was recorded and publishes once', async () => {
    const { apps, env, prefix } = await s3Apps();
    await apps.worker.close();
    opened.splice(opened.indexOf(apps), 1, { close: () => apps.api.close() });
    // A 5 s lock: the killed worker's job is taken back once it lapses, and a loaded machine
    // still renews it in time (a 2 s lock lapsed under load 30 and the job counted as stalled).
    const workerEnv = { ...env, IMPORT_LOCK_MS: '5000' };
    workers.push(await startWorkerProcess(workerEnv));
    const res = await post(apps.api, '/datasets/inbox/import', { dataset_id: 'DS-CRASH' });
    expect(res.status).toBe(202);
    // Killed once the attempt has recorded files in its staging journal, before it ends.
    await waitForRecordedFiles(
      apps.api,
      res.body.id,
      { client, bucket: storageBucket, prefix },
      COPY_WAIT_MS,
    );
    workers[0].kill('SIGKILL');
    await new Promise((r) => workers[0].once('exit', r));
    const storage = storageFromSettings(apps.settings);
    const target = 'projects/PRJ1/SUB-CRASH/data/raw/DS-CRASH';
    expect(await storage.exists(target)).toBe(false);

    workers.push(await startWorkerProcess(workerEnv));
    const done = await waitForImport(apps.api, res.body.id, TERMINAL_STATES, COPY_WAIT_MS);
    expect(done).toMatchObject({ state: 'imported', error: null });
    expect(done.attempts).toBeGreaterThanOrEqual(2);
    const provenance = JSON.parse(
      (await storage.readObject(`${target}/.provisioner/provenance.json`))!.toString(),
    );
    expect(provenance.import.kept_from_earlier_attempts.files).toBeGreaterThan(0);
    const keys = await listKeys(client, storageBucket, `${prefix}${target}/`);
    expect(keys.length).toBe(Object.keys(CRASH_FILES).length + 2);
    for (const [path, content] of Object.entries(CRASH_FILES))
      expect((await storage.readObject(`${target}/${path}`))!.equals(content)).toBe(true);
  });
});
