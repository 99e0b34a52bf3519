import type { S3Client } from '@aws-sdk/client-s3';
import { join } from 'node:path';
import request from 'supertest';
import { mapLimit } from '../../apps/provisioner/src/common/map-limit';
import {
  DEFAULT_SOURCE_LIMITS,
  parseSources,
  type S3SourceConfig,
} from '../../apps/provisioner/src/config/source-config';
import { runDatasetImport } from '../../apps/provisioner/src/import-pipeline/dataset-import-pipeline';
import { S3InboxSource } from '../../apps/provisioner/src/sources/s3-inbox/s3-inbox.source';
import { SourceUnavailableError } from '../../apps/provisioner/src/sources/source-system';
import { FilesystemStorage } from '../../apps/provisioner/src/storage/filesystem/filesystem-storage';
import { S3Storage } from '../../apps/provisioner/src/storage/s3/s3-storage';
import { digest, tempDir } from '../../apps/provisioner/test/support/dropzone-fixture';
import {
  hookedInbox,
  inboxImportContext,
  S3InboxFixture,
} from '../../apps/provisioner/test/support/s3-inbox-fixture';
import {
  queueEnv,
  startProvisionerApps,
  TEST_WRITE_KEY,
  type ProvisionerTestApps,
} from '../support/provisioner-app';
import {
  createTestBucket,
  listKeys,
  privateS3Server,
  type PrivateS3Server,
  testS3Client,
} from '../support/s3-server';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

/** Short time-outs, so that a frozen inbox shows in seconds (the defaults are 10 s, 5 min, 60 s). */
const TIMEOUTS = { connectMs: 1000, requestMs: 3000, idleMs: 1000 };
/** Three tries (the SDK's) of a request each held to its idle time-out, on a loaded machine. */
const FROZEN_FAIL_WITHIN_MS = 20_000;
/** S3's longest key, in bytes. */
const MAX_KEY_BYTES = 1024;
const SMALL_OBJECTS = 10_000;
const TARGET = (id: string) => `projects/PRJ1/SUB-1/data/raw/${id}`;

/**
 * An S3 inbox under faults and at its limits, on a Swift of this file's own: emptied by its
 * submitter mid-import, read with a credential the store refuses, frozen mid-import, holding keys
 * of the longest length S3 allows, and holding 10,000 small objects in one dataset.
 */
describe('S3 inbox source: faults and limits', () => {
  let server: PrivateS3Server;
  let client: S3Client;
  let bucket: string;
  let inbox: S3InboxFixture;
  let source: S3InboxSource;
  const opened: ProvisionerTestApps[] = [];

  const configOf = (extra: Record<string, unknown> = {}): S3SourceConfig => {
    const parsed = parseSources(JSON.stringify([inbox.source('inbox', extra)]), '', (p) => p);
    expect(parsed.errors).toEqual([]);
    return parsed.sources[0] as S3SourceConfig;
  };
  const context = inboxImportContext;
  const files = (n: number, prefix = 'f') =>
    Object.fromEntries(
      Array.from({ length: n }, (_, i) => [`${prefix}${String(i).padStart(5, '0')}.txt`, `${i}\n`]),
    );

  beforeAll(async () => {
    server = await privateS3Server(join(tempDir('inbox-robust-swift'), 'server'));
    client = testS3Client(server);
    bucket = await createTestBucket(client, 'inbox-robust');
    inbox = new S3InboxFixture(server, client, bucket, '');
    inbox.local.submission('SUB-1', {
      project: 'PRJ1',
      datasets: ['DS-EMPTIED', 'DS-FROZEN', 'DS-LONG', 'DS-TOOLONG', 'DS-MANY'],
    });
    inbox.local.dataset('DS-EMPTIED', { submission: 'SUB-1', files: files(20) });
    inbox.local.dataset('DS-FROZEN', { submission: 'SUB-1', files: files(20) });
    await inbox.upload();
    source = new S3InboxSource(configOf());
  });

  // The server's reset deletes the 10,000 objects with its directory: emptying the bucket through
  // S3 costs Swift as much as filling it (165 s beside two CPU-bound processes, eight
  // DeleteObjects requests of 1,000 keys in flight; 255 s one at a time). The rest is its stop.
  afterAll(async () => {
    for (const app of opened) await app.close();
    client?.destroy();
    if (server) server.script('reset');
  }, 60_000);

  it('an inbox emptied mid-import: the attempt refuses (source_changed), the next one finds nothing', async () => {
    const storage = new FilesystemStorage(tempDir('inbox-emptied'));
    let emptied = false;
    const src = hookedInbox(source, async () => {
      if (emptied) return;
      emptied = true;
      const keys = await listKeys(client, bucket, 'datasets/DS-EMPTIED/');
      await mapLimit(keys, 16, (key) => inbox.remove(key));
    });
    const first = await runDatasetImport(
      context(src, storage, 'DS-EMPTIED', { copyConcurrency: 1 }),
    ).catch((e: unknown) => e);
    expect(first).toMatchObject({ code: 'source_changed' });
    expect(await storage.exists(TARGET('DS-EMPTIED'))).toBe(false);
    const second = await runDatasetImport(
      context(source, storage, 'DS-EMPTIED', { attempt: 2, lastAttempt: true }),
    ).catch((e: unknown) => e);
    expect(second).toMatchObject({
      code: 'not_ready',
      message: expect.stringContaining('not_delivered'),
    });
    expect(await storage.exists(TARGET('DS-EMPTIED'))).toBe(false);
    expect(await storage.listStaging()).toEqual([]);
  });

  it('a credential the store refuses: every route answers 502 naming the refusal, nothing queued', async () => {
    const apps = await startProvisionerApps({
      ...(await queueEnv()),
      SOURCES: JSON.stringify([inbox.source('inbox', { secret_access_key: 'not-the-secret' })]),
      STORAGE_ROOT: tempDir('inbox-refused'),
    });
    opened.push(apps);
    const http = () => request(apps.api.getHttpServer());
    for (const res of [
      await http().get('/submissions/inbox').set('X-API-Key', TEST_WRITE_KEY),
      await http().get('/datasets/inbox/diff').set('X-API-Key', TEST_WRITE_KEY),
      await http()
        .post('/datasets/inbox/import')
        .set('X-API-Key', TEST_WRITE_KEY)
        .send({ dataset_id: 'DS-EMPTIED' }),
    ]) {
      expect(res.status).toBe(502);
      expect(res.body).toMatchObject({
        status: 'Error',
        description: expect.stringMatching(
          new RegExp(
            `^s3 inbox ${bucket} refused the request \\(\\w+\\): check the source's credentials`,
          ),
        ),
        more: { source: 'inbox' },
      });
    }
    const imports = await http().get('/imports').set('X-API-Key', TEST_WRITE_KEY);
    expect(imports.body).toMatchObject({ count: 0 });
  });

  describe('frozen', () => {
    let proxy: TcpProxy;
    let frozenSource: S3InboxSource;

    beforeAll(async () => {
      proxy = await startTcpProxy(Number(new URL(server.endpoint).port));
      frozenSource = new S3InboxSource(
        configOf({ endpoint: `http://127.0.0.1:${proxy.port}` }),
        DEFAULT_SOURCE_LIMITS,
        TIMEOUTS,
      );
    });

    afterAll(async () => {
      proxy?.thaw();
      await proxy?.close();
    });

    it('mid-import: the attempt fails as source_unavailable within seconds, and imports once thawed', async () => {
      const storage = new FilesystemStorage(tempDir('inbox-frozen'));
      let reads = 0;
      const src = hookedInbox(frozenSource, async () => {
        if (++reads === 5) proxy.freeze();
      });
      const started = Date.now();
      const first = await runDatasetImport(
        context(src, storage, 'DS-FROZEN', { copyConcurrency: 1 }),
      ).catch((e: unknown) => e);
      const failedAfterMs = Date.now() - started;
      process.stdout.write(`s3 inbox freeze: the attempt failed after ${failedAfterMs} ms\n`);
      expect(first).toBeInstanceOf(SourceUnavailableError);
      expect((first as Error).message).toMatch(/^s3 inbox \S+ does not answer: /);
      expect(failedAfterMs).toBeLessThan(FROZEN_FAIL_WITHIN_MS);
      // A listing meanwhile fails the same way, bounded too.
      await expect(frozenSource.listSubmissions()).rejects.toBeInstanceOf(SourceUnavailableError);
      expect(await storage.exists(TARGET('DS-FROZEN'))).toBe(false);

      proxy.thaw();
      const done = await runDatasetImport(
        context(frozenSource, storage, 'DS-FROZEN', { attempt: 2 }),
      );
      expect(done).toMatchObject({ files: 20, copied: true });
    });
  });

  it('keys at S3’s length limit import; a path whose storage key would be longer is refused', async () => {
    // datasets/DS-LONG/payload/ is 25 bytes: the path takes the other 999 of the 1,024.
    const seg = (c: string, n: number) => c.repeat(n);
    const longPath = `${seg('a', 250)}/${seg('b', 250)}/${seg('ü', 125)}/${seg('d', 246)}`;
    const key = `datasets/DS-LONG/payload/${longPath}`;
    expect(Buffer.byteLength(key)).toBe(MAX_KEY_BYTES);
    // A 256-byte segment: longer than any file name a directory holds.
    const tooLong = `${seg('x', 256)}.txt`;
    for (const [id, path] of [
      ['DS-LONG', longPath],
      ['DS-TOOLONG', tooLong],
    ]) {
      await inbox.put(`datasets/${id}/payload/${path}`, 'at the limit\n');
      await inbox.put(
        `datasets/${id}/manifest-sha256.txt`,
        `${digest('sha256', 'at the limit\n')}  ${path}\n`,
      );
      await inbox.put(
        `datasets/${id}/dataset.json`,
        JSON.stringify({ dataset_id: id, submission: 'SUB-1', title: id }),
      );
      await inbox.put(`datasets/${id}/.ready`, '');
    }
    const fs = new FilesystemStorage(tempDir('inbox-long'));
    const done = await runDatasetImport(context(source, fs, 'DS-LONG'));
    expect((await fs.readObject(`${done.path}/${longPath}`))!.toString()).toBe('at the limit\n');

    const refused = await runDatasetImport(context(source, fs, 'DS-TOOLONG')).catch(
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({
      code: 'preflight_failed',
      details: expect.arrayContaining([expect.objectContaining({ code: 'name_too_long' })]),
    });

    // Into S3 storage under a prefix, the same path's key is over 1,024 bytes: refused up front.
    const s3 = new S3Storage(testS3Client(server), {
      bucket,
      prefix: 'storage/',
      partBytes: 5 * 1024 * 1024,
      uploadConcurrency: 2,
    });
    const overKey = await runDatasetImport(
      context(source, s3, 'DS-LONG', { importId: 'inbox-dataset-DS-LONG-s3' }),
    ).catch((e: unknown) => e);
    expect(overKey).toMatchObject({
      code: 'preflight_failed',
      details: expect.arrayContaining([expect.objectContaining({ code: 'key_too_long' })]),
    });
  });

  it('10,000 small objects in one dataset: listed and imported, every one', async () => {
    const many = files(SMALL_OBJECTS, 'd/');
    inbox.local.dataset('DS-MANY', { submission: 'SUB-1', files: many });
    const uploadStarted = Date.now();
    await inbox.upload('datasets/DS-MANY');
    const uploadMs = Date.now() - uploadStarted;
    const listed = await source.listDatasets(
      [(await source.getSubmission('SUB-1'))!],
      (_, id) => id === 'DS-MANY',
    );
    expect(listed[0]).toMatchObject({ ready: true, fileCount: SMALL_OBJECTS });
    const storage = new FilesystemStorage(tempDir('inbox-many'));
    const started = Date.now();
    const done = await runDatasetImport(context(source, storage, 'DS-MANY'));
    process.stdout.write(
      `s3 inbox: ${SMALL_OBJECTS} small objects uploaded in ${uploadMs} ms, imported in ${Date.now() - started} ms\n`,
    );
    expect(done).toMatchObject({ files: SMALL_OBJECTS, copied: true });
    expect((await storage.readObject(`${done.path}/d/09999.txt`))!.toString()).toBe('9999\n');
    // 10,000 PUTs and 10,000 GETs: a minute on a quiet machine, minutes on a loaded one.
  }, 420_000);
});
