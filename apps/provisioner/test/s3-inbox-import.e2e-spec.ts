import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import {
  createTestBucket,
  removeTestBucket,
  s3TestServer,
  S3TestServer,
  testS3Client,
} from '../../../test/support/s3-server';
import { createS3Client, s3StoreName } from '../src/common/s3/s3-client';
import { parseSources, type S3SourceConfig } from '../src/config/source-config';
import type { DatasetImportContext } from '../src/import-pipeline/dataset-import-context';
import { runDatasetImport } from '../src/import-pipeline/dataset-import-pipeline';
import { ImportStoppedError, ImportTransientError } from '../src/import-pipeline/import-errors';
import { S3InboxSource } from '../src/sources/s3-inbox/s3-inbox.source';
import type { SourceSystem } from '../src/sources/source-system';
import { FilesystemStorage } from '../src/storage/filesystem/filesystem-storage';
import { parseProvenance } from '../src/storage/provenance';
import { S3Bucket } from '../src/storage/s3/s3-bucket';
import { S3Storage } from '../src/storage/s3/s3-storage';
import type { StorageSystem } from '../src/storage/storage-system';
import { until } from '../../../test/support/wait';
import { tempDir } from './support/dropzone-fixture';
import {
  hookedInbox,
  inboxImportContext,
  putMultipart,
  S3InboxFixture,
} from './support/s3-inbox-fixture';
import { countRecordedFiles } from './support/staging-records';

const MiB = 1024 * 1024;
const FILES: Record<string, Buffer> = Object.fromEntries(
  Array.from({ length: 12 }, (_, i) => [
    `f${String(i).padStart(2, '0')}.bin`,
    randomBytes(MiB + i),
  ]),
);
/** Objects below WHOLE_READ_BELOW: each read whole in one hand-signed GET. */
const SMALL_FILES: Record<string, Buffer> = Object.fromEntries(
  Array.from({ length: 12 }, (_, i) => [
    `s${String(i).padStart(2, '0')}.txt`,
    randomBytes(4096 + i),
  ]),
);
const TARGET = (id: string) => `projects/PRJ1/SUB-1/data/raw/${id}`;

jest.setTimeout(120_000);

/**
 * The import pipeline reading an S3 inbox on Swift (runDatasetImport, as the worker runs it),
 * with a hook before each object is read: a submitter changing or deleting objects mid-import,
 * and a worker stopping (SIGTERM) mid-copy once some files are recorded (the next attempt keeps
 * exactly those, whatever the store's clock says), into a filesystem and into S3 storage on the
 * same store (server-side copies).
 */
describe('imports from an S3 inbox (Swift s3api)', () => {
  let server: S3TestServer;
  let client: S3Client;
  let inboxBucket: string;
  let storageBucket: string;
  let inbox: S3InboxFixture;
  let source: S3InboxSource;
  let n = 0;

  const storages: Record<string, () => StorageSystem> = {
    filesystem: () => new FilesystemStorage(tempDir('s3-inbox-fs')),
    's3 (server-side copies)': () =>
      new S3Storage(
        createS3Client({
          endpoint: server.endpoint,
          region: server.region,
          forcePathStyle: true,
          credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
        }),
        {
          bucket: storageBucket,
          prefix: `run-${++n}/`,
          store: s3StoreName(server.endpoint, server.region),
          partBytes: 5 * MiB,
          uploadConcurrency: 4,
        },
      ),
  };

  const context = (
    src: SourceSystem,
    storage: StorageSystem,
    datasetId: string,
    extra: Partial<DatasetImportContext> = {},
  ) =>
    inboxImportContext(src, storage, datasetId, {
      importId: `inbox-dataset-${datasetId}-${n}`,
      copyConcurrency: 2,
      ...extra,
    });

  /** A fresh dataset of FILES in the inbox (each test changes its own). */
  const deposit = async (id: string, files = FILES) => {
    inbox.local.dataset(id, { submission: 'SUB-1', files });
    await inbox.upload(`datasets/${id}`);
  };

  beforeAll(async () => {
    server = await s3TestServer();
    client = testS3Client(server);
    inboxBucket = await createTestBucket(client, 'inbox-imp');
    storageBucket = await createTestBucket(client, 'inbox-imp-store');
    inbox = new S3InboxFixture(server, client, inboxBucket, '');
    const ids = Object.keys(storages).flatMap((s) =>
      ['CHG', 'DEL', 'STOP', 'SKEW', 'SCHG', 'SDEL', 'SOK'].map((k) => `${k}-${s.length}`),
    );
    inbox.local.submission('SUB-1', { project: 'PRJ1', datasets: [...ids, 'MPU'] });
    await inbox.upload('submissions');
    const parsed = parseSources(JSON.stringify([inbox.source()]), '', (p) => p);
    expect(parsed.errors).toEqual([]);
    source = new S3InboxSource(parsed.sources[0] as S3SourceConfig);
  });

  afterAll(async () => {
    if (inboxBucket) await removeTestBucket(client, inboxBucket);
    if (storageBucket) await removeTestBucket(client, storageBucket);
    client?.destroy();
  });

  /**
   * Whether the dataset is published. On S3 a failed attempt's objects stay at their keys for the
   * next attempt; without the commit object (provenance.json) the dataset does not exist.
   */
  const published = (storage: StorageSystem, id: string) => storage.exists(TARGET(id));

  // Swift's s3api checks a copy's x-amz-copy-source-if-match against a multipart object's Swift
  // manifest ETag, not its S3 one, so it refuses every conditional copy of such an object with
  // 412 though GETs with If-Match pass (swift/common/middleware/s3api/s3request.py,
  // check_copy_source, Swift 2.30 as Debian ships it).
  it('multipart objects of the same store: the store refuses their conditional copy, their bytes go through the import, the rest is copied server-side', async () => {
    const big = { 'big-1.bin': randomBytes(11 * MiB), 'big-2.bin': randomBytes(6 * MiB + 3) };
    inbox.local.dataset('MPU', { submission: 'SUB-1', files: { ...FILES, ...big } });
    await inbox.upload('datasets/MPU');
    for (const [path, body] of Object.entries(big)) {
      await putMultipart(client, inboxBucket, `datasets/MPU/payload/${path}`, body);
      const head = await client.send(
        new HeadObjectCommand({ Bucket: inboxBucket, Key: `datasets/MPU/payload/${path}` }),
      );
      expect(head.ETag).toMatch(/-\d+"$/);
    }
    const storage = storages['s3 (server-side copies)']();
    const reads = new Map<string, number>();
    const counted = hookedInbox(source, async (path) => {
      reads.set(path, (reads.get(path) ?? 0) + 1);
    });
    const result = await runDatasetImport(context(counted, storage, 'MPU'));
    expect(result).toMatchObject({ files: 14, copied: true });
    // The refusal comes before the bytes are read: each object is read once, never again to be
    // uploaded after a whole read for a copy that was refused.
    expect([...reads.values()].every((n) => n === 1)).toBe(true);
    expect(reads.size).toBe(14);
    for (const [path, content] of Object.entries({ ...FILES, ...big }))
      expect((await storage.readObject(`${result.path}/${path}`))!.equals(content)).toBe(true);
    expect(await storage.listStaging()).toEqual([]);
  });

  describe.each(Object.keys(storages))('into %s storage', (kind) => {
    const id = (k: string) => `${k}-${kind.length}`;

    it('an object overwritten mid-import: refused (source_changed), nothing published', async () => {
      await deposit(id('CHG'));
      const storage = storages[kind]();
      let changed = false;
      const src = hookedInbox(source, async (path) => {
        if (path !== 'f05.bin' || changed) return;
        changed = true;
        await inbox.put(`datasets/${id('CHG')}/payload/f05.bin`, randomBytes(MiB + 5));
      });
      const error = await runDatasetImport(context(src, storage, id('CHG'))).catch((e) => e);
      expect(error).toBeInstanceOf(ImportTransientError);
      expect(error).toMatchObject({
        code: 'source_changed',
        details: [expect.objectContaining({ code: 'source_changed', path: 'f05.bin' })],
      });
      expect(await published(storage, id('CHG'))).toBe(false);
    });

    it('an object deleted mid-import: refused (source_changed), nothing published', async () => {
      await deposit(id('DEL'));
      const storage = storages[kind]();
      const src = hookedInbox(source, async (path) => {
        if (path === 'f03.bin') await inbox.remove(`datasets/${id('DEL')}/payload/f03.bin`);
      });
      const error = await runDatasetImport(context(src, storage, id('DEL'))).catch((e) => e);
      expect(error).toMatchObject({
        code: 'source_changed',
        details: [expect.objectContaining({ path: 'f03.bin', message: 'it is gone' })],
      });
      expect(await published(storage, id('DEL'))).toBe(false);
    });

    it('small objects, read whole: imported with every checksum, none copied server-side', async () => {
      await deposit(id('SOK'), SMALL_FILES);
      const storage = storages[kind]();
      const copies = jest.spyOn(S3Bucket.prototype, 'copyFrom');
      try {
        const result = await runDatasetImport(context(source, storage, id('SOK')));
        expect(result).toMatchObject({ files: 12, copied: true });
        for (const [path, content] of Object.entries(SMALL_FILES))
          expect((await storage.readObject(`${result.path}/${path}`))!.equals(content)).toBe(true);
        // Below SERVER_SIDE_COPY_FROM the bytes read to hash them are uploaded, never copied.
        expect(copies).not.toHaveBeenCalled();
      } finally {
        copies.mockRestore();
      }
    });

    it('a small object (read whole) overwritten mid-import: refused (source_changed), nothing published', async () => {
      await deposit(id('SCHG'), SMALL_FILES);
      const storage = storages[kind]();
      let changed = false;
      const src = hookedInbox(source, async (path) => {
        if (path !== 's05.txt' || changed) return;
        changed = true;
        await inbox.put(`datasets/${id('SCHG')}/payload/s05.txt`, randomBytes(4096 + 5));
      });
      const error = await runDatasetImport(context(src, storage, id('SCHG'))).catch((e) => e);
      expect(error).toBeInstanceOf(ImportTransientError);
      expect(error).toMatchObject({
        code: 'source_changed',
        details: [expect.objectContaining({ code: 'source_changed', path: 's05.txt' })],
      });
      expect(await published(storage, id('SCHG'))).toBe(false);
    });

    it('a small object (read whole) deleted mid-import: refused (source_changed), nothing published', async () => {
      await deposit(id('SDEL'), SMALL_FILES);
      const storage = storages[kind]();
      const src = hookedInbox(source, async (path) => {
        if (path === 's03.txt') await inbox.remove(`datasets/${id('SDEL')}/payload/s03.txt`);
      });
      const error = await runDatasetImport(context(src, storage, id('SDEL'))).catch((e) => e);
      expect(error).toMatchObject({
        code: 'source_changed',
        details: [expect.objectContaining({ path: 's03.txt', message: 'it is gone' })],
      });
      expect(await published(storage, id('SDEL'))).toBe(false);
    });

    /** Files the stopped attempt copies and records before the worker stops. */
    const RECORDED = 4;

    it.each([
      ['STOP', 'the store clock as the worker sees it', 0],
      ['SKEW', "a store clock an hour ahead of the worker's", 3_600_000],
    ])(
      'a worker stopping mid-copy hands over; the next attempt keeps what it recorded and copies only the rest (%s: %s)',
      async (key, _clock, storeClockAheadMs) => {
        await deposit(id(key));
        const storage = storages[kind]();
        const recorded = countRecordedFiles(storage);
        const stop = new AbortController();
        const firstFiles: string[] = [];
        // The lanes wait before any file past the first RECORDED until those are recorded (at
        // most RECORD_INTERVAL_MS after they end), then the worker stops (SIGTERM).
        const src = hookedInbox(
          source,
          async (path) => {
            if (firstFiles.length < RECORDED) {
              firstFiles.push(path);
              return;
            }
            await until(() => recorded() >= RECORDED, `${RECORDED} files recorded`, 30_000, 20);
            stop.abort();
          },
          { storeClockAheadMs },
        );
        const first = await runDatasetImport(
          context(src, storage, id(key), { signal: stop.signal }),
        ).catch((e) => e);
        expect(first).toBeInstanceOf(ImportStoppedError);
        expect(first.message).toContain(`${RECORDED} of 12 files staged and recorded`);
        expect(await published(storage, id(key))).toBe(false);
        expect(recorded()).toBe(RECORDED);

        const copiedAgain: string[] = [];
        const next = hookedInbox(source, async (path) => void copiedAgain.push(path), {
          storeClockAheadMs,
        });
        const result = await runDatasetImport(context(next, storage, id(key), { attempt: 2 }));
        expect(result).toMatchObject({ files: 12, copied: true });
        expect(copiedAgain.sort()).toEqual(
          Object.keys(FILES).filter((path) => !firstFiles.includes(path)),
        );
        const provenance = parseProvenance(
          await storage.readObject(`${result.path}/.provisioner/provenance.json`),
        )!;
        expect(provenance.import).toMatchObject({
          attempt: 2,
          kept_from_earlier_attempts: {
            files: RECORDED,
            bytes: firstFiles.reduce((sum, path) => sum + FILES[path].length, 0),
          },
        });
        for (const [path, content] of Object.entries(FILES))
          expect((await storage.readObject(`${result.path}/${path}`))!.equals(content)).toBe(true);
        expect(await storage.listStaging()).toEqual([]);
      },
    );
  });
});
