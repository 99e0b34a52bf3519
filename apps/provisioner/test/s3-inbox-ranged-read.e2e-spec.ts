import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import {
  createTestBucket,
  removeTestBucket,
  s3TestServer,
  S3TestServer,
  testS3Client,
} from '../../../test/support/s3-server';
import { createS3Client, s3StoreName } from '../src/common/s3/s3-client';
import { parseSources, type S3SourceConfig } from '../src/config/source-config';
import { runDatasetImport } from '../src/import-pipeline/dataset-import-pipeline';
import { ImportTransientError } from '../src/import-pipeline/import-errors';
import {
  IN_ORDER_QUEUE_BYTES,
  ReadAheadBudget,
  type RangedReadSettings,
} from '../src/sources/s3-inbox/ranged-read';
import { S3InboxSource } from '../src/sources/s3-inbox/s3-inbox.source';
import type { RemoteDataset, SourceSystem } from '../src/sources/source-system';
import { FilesystemStorage } from '../src/storage/filesystem/filesystem-storage';
import { parseProvenance } from '../src/storage/provenance';
import { S3Storage } from '../src/storage/s3/s3-storage';
import type { StorageSystem } from '../src/storage/storage-system';
import { tempDir } from './support/dropzone-fixture';
import { inboxImportContext, putMultipart, S3InboxFixture } from './support/s3-inbox-fixture';

const MiB = 1024 * 1024;
/** Small ranges, so objects of a few MiB are read in many. */
const RANGED: RangedReadSettings = { rangeBytes: MiB, ranges: 4 };
const TARGET = (id: string) => `projects/PRJ1/SUB-1/data/raw/${id}`;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

jest.setTimeout(120_000);

/**
 * Large inbox objects read as ranged GETs, several in flight (S3_INBOX_RANGE_BYTES,
 * S3_INBOX_RANGES), on Swift: the bytes hashed in order whatever order the ranges end in, every
 * range conditional on the listed version (an object overwritten or deleted between its ranges
 * refuses the import, nothing published), and what the ranges hold within the worker's budget.
 */
describe('S3 inbox: large objects read in ranges (Swift s3api)', () => {
  let server: S3TestServer;
  let client: S3Client;
  let inboxBucket: string;
  let storageBucket: string;
  let inbox: S3InboxFixture;
  let n = 0;

  const storages: Record<string, () => StorageSystem> = {
    filesystem: () => new FilesystemStorage(tempDir('s3-ranged-fs')),
    s3: () =>
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

  /** The inbox source with RANGED reads and a budget of its own (to read its peak). */
  const rangedSource = (budget = ReadAheadBudget.of(RANGED)) => {
    const parsed = parseSources(JSON.stringify([inbox.source()]), '', (p) => p);
    expect(parsed.errors).toEqual([]);
    return new S3InboxSource(parsed.sources[0] as S3SourceConfig, undefined, undefined, {
      settings: RANGED,
      budget,
    });
  };

  /**
   * A dataset whose `multipart` files are stored as multipart uploads (an SLO in Swift, the
   * inbox's large deposits as rclone makes them), the others as single objects.
   */
  const deposit = async (id: string, files: Record<string, Buffer>, multipart: string[]) => {
    inbox.local.dataset(id, { submission: 'SUB-1', files });
    await inbox.upload(`datasets/${id}`);
    for (const path of multipart)
      await putMultipart(client, inboxBucket, `datasets/${id}/payload/${path}`, files[path]);
  };

  /**
   * The source with `onFirstChunk` awaited once the first bytes of `path` are in hand, before
   * they are passed on: the ranges in the window are in flight, the others not yet asked for.
   */
  const changedMidRead = (
    src: S3InboxSource,
    path: string,
    onFirstChunk: () => Promise<void>,
  ): SourceSystem =>
    Object.assign(Object.create(src) as S3InboxSource, {
      remoteDataset: (id: string): RemoteDataset => {
        const dataset = src.remoteDataset(id);
        return Object.assign(Object.create(dataset) as RemoteDataset, {
          read: (file: string, etag: string, size?: number) =>
            (async function* () {
              let first = file === path;
              for await (const chunk of dataset.read(file, etag, size)) {
                if (first) {
                  first = false;
                  await onFirstChunk();
                }
                yield chunk;
              }
            })(),
        });
      },
    });

  /** Ranged GETs the worker's S3 clients send, and the most in flight at once. */
  const countRangedGets = () => {
    const original = S3Client.prototype.send;
    const seen = { ranged: 0, inFlight: 0, peak: 0 };
    function counted(this: S3Client, command: unknown, ...rest: unknown[]): Promise<unknown> {
      const call = (original as (...a: unknown[]) => Promise<unknown>).call(this, command, ...rest);
      if (!(command instanceof GetObjectCommand) || !command.input.Range) return call;
      seen.ranged++;
      seen.peak = Math.max(seen.peak, ++seen.inFlight);
      return call.finally(() => seen.inFlight--);
    }
    const spy = jest.spyOn(S3Client.prototype, 'send').mockImplementation(counted as never);
    return { seen, restore: () => spy.mockRestore() };
  };

  beforeAll(async () => {
    server = await s3TestServer();
    client = testS3Client(server);
    inboxBucket = await createTestBucket(client, 'inbox-ranged');
    storageBucket = await createTestBucket(client, 'inbox-ranged-store');
    inbox = new S3InboxFixture(server, client, inboxBucket, '');
    const ids = Object.keys(storages).flatMap((s) => ['OK', 'CHG', 'DEL'].map((k) => `${k}-${s}`));
    inbox.local.submission('SUB-1', { project: 'PRJ1', datasets: [...ids, 'MEM'] });
    await inbox.upload('submissions');
  });

  afterAll(async () => {
    if (inboxBucket) await removeTestBucket(client, inboxBucket);
    if (storageBucket) await removeTestBucket(client, storageBucket);
    client?.destroy();
  });

  describe.each(Object.keys(storages))('into %s storage', (kind) => {
    const id = (k: string) => `${k}-${kind}`;

    it('large objects read in several ranges at once: every byte in order, the checksums right', async () => {
      const files = {
        'multipart.bin': randomBytes(13 * MiB + 7),
        'single.bin': randomBytes(9 * MiB + 1),
        'small.txt': randomBytes(3000),
      };
      await deposit(id('OK'), files, ['multipart.bin']);
      const storage = storages[kind]();
      const gets = countRangedGets();
      try {
        const result = await runDatasetImport(
          inboxImportContext(rangedSource(), storage, id('OK'), { copyConcurrency: 1 }),
        );
        expect(result).toMatchObject({ files: 3, copied: true });
        // 14 ranges and 10, up to 4 in flight; nothing ranged for the small file.
        expect(gets.seen.ranged).toBe(24);
        expect(gets.seen.peak).toBeGreaterThanOrEqual(2);
        expect(gets.seen.peak).toBeLessThanOrEqual(RANGED.ranges);
        const provenance = parseProvenance(
          await storage.readObject(`${result.path}/.provisioner/provenance.json`),
        )!;
        for (const [path, content] of Object.entries(files)) {
          expect(provenance.files.find((f) => f.path === path)).toMatchObject({
            size: content.length,
            sha256: sha256(content),
          });
          expect((await storage.readObject(`${result.path}/${path}`))!.equals(content)).toBe(true);
        }
      } finally {
        gets.restore();
      }
    });

    it.each([
      ['overwritten (same size)', 'CHG', 'its ETag is no longer the one listed'],
      ['deleted', 'DEL', 'it is gone'],
    ])(
      'an object %s while its ranges are read: refused (source_changed), nothing published',
      async (_what, key, message) => {
        const files = { 'big.bin': randomBytes(12 * MiB), 'other.bin': randomBytes(2 * MiB) };
        await deposit(id(key), files, ['big.bin']);
        const storage = storages[kind]();
        const objectKey = `datasets/${id(key)}/payload/big.bin`;
        const src = changedMidRead(rangedSource(), 'big.bin', () =>
          key === 'CHG' ? inbox.put(objectKey, randomBytes(12 * MiB)) : inbox.remove(objectKey),
        );
        const error = await runDatasetImport(
          inboxImportContext(src, storage, id(key), { copyConcurrency: 1 }),
        ).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ImportTransientError);
        expect(error).toMatchObject({
          code: 'source_changed',
          details: [expect.objectContaining({ path: 'big.bin', message })],
        });
        expect(await storage.exists(TARGET(id(key)))).toBe(false);
      },
    );
  });

  it('several large objects at once: what their ranges hold stays within the read-ahead budget', async () => {
    const files = Object.fromEntries(
      Array.from({ length: 4 }, (_, i) => [`big-${i}.bin`, randomBytes(10 * MiB + i)]),
    );
    await deposit('MEM', files, ['big-0.bin', 'big-1.bin']);
    const budget = ReadAheadBudget.of(RANGED);
    const storage = storages.filesystem();
    const result = await runDatasetImport(
      inboxImportContext(rangedSource(budget), storage, 'MEM', { copyConcurrency: 4 }),
    );
    expect(result).toMatchObject({ files: 4, copied: true });
    // The slots' ranges, and for each object read at once the range in order (streamed with
    // back-pressure: its queue, and one chunk more).
    const objectsAtOnce = 4;
    const chunk = 256 * 1024;
    expect(budget.peakQueued).toBeGreaterThan(0);
    expect(budget.peakQueued).toBeLessThanOrEqual(
      budget.slots * RANGED.rangeBytes + objectsAtOnce * (IN_ORDER_QUEUE_BYTES + chunk),
    );
    // Everything queued was taken or dropped.
    expect(budget.queued).toBe(0);
    for (const [path, content] of Object.entries(files))
      expect((await storage.readObject(`${result.path}/${path}`))!.equals(content)).toBe(true);
  });
});
