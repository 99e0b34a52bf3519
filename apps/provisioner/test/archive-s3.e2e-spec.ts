import type { S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import {
  bodySize,
  encrypt,
  generateKeyPair,
  headerAt,
  publicKeyFile,
  secretKeyFile,
} from '@app/crypt4gh';
import { referenceDecrypt } from '../../../test/support/crypt4gh-reference';
import {
  createTestBucket,
  listKeys,
  removeTestBucket,
  s3TestServer,
  testS3Client,
} from '../../../test/support/s3-server';
import { DEFAULT_SOURCE_LIMITS } from '../src/config/source-config';
import { CopyThreadPool } from '../src/import-pipeline/copying';
import { runDatasetImport } from '../src/import-pipeline/dataset-import-pipeline';
import { closeSourceScanner, sourceScanner } from '../src/sources/source-system';
import { DropzoneSource } from '../src/sources/dropzone/dropzone.source';
import { archiveStorage, bodyChecksumPath, headerPath } from '../src/storage/archive-storage';
import { checkRotation } from './support/archive-rotation';
import { parseProvenance } from '../src/storage/provenance';
import { S3Storage } from '../src/storage/s3/s3-storage';
import { SealingThreads } from '../src/storage/sealing-threads';
import { digest, DropzoneFixture, tempDir } from './support/dropzone-fixture';

const MiB = 1024 * 1024;
/** Starting Swift from its installed packages takes ~5 s; installing them first ~40 s more. */
jest.setTimeout(240_000);

/**
 * Archive mode on S3 (Debian's Swift with s3api, a real server): what lands in the bucket is
 * Crypt4GH bodies and headers only, plain-text checksums in the provenance.
 */
describe('archive mode on S3 storage (STORAGE_ENCRYPTION=crypt4gh)', () => {
  const dir = tempDir('archive-s3');
  const archive = generateKeyPair();
  const pool = new CopyThreadPool(2);
  // The large body is sealed on a thread, as the worker does (storage.module.ts).
  const sealer = new SealingThreads(2);
  let client: S3Client;
  let bucket: string;
  let storage: S3Storage;
  const secretKeyPath = join(dir, 'archive.sec');
  /** The dataset the first test stores, which the rotation test rotates. */
  let stored: { path: string; plain: Record<string, Buffer> } | undefined;

  beforeAll(async () => {
    const server = await s3TestServer();
    client = testS3Client(server);
    bucket = await createTestBucket(client, 'archive');
    storage = new S3Storage(client, {
      bucket,
      prefix: '',
      partBytes: 5 * MiB,
      uploadConcurrency: 3,
    });
    writeFileSync(secretKeyPath, await secretKeyFile(archive.secretKey));
    await Promise.all([sourceScanner().start(), pool.start()]);
  });

  afterAll(async () => {
    await Promise.all([pool.close(), sealer.close()]);
    await closeSourceScanner();
    if (bucket) await removeTestBucket(client, bucket);
    client?.destroy();
  });

  it('uploads bodies (one multipart) and headers apart, and re-wraps a deposit, never a plain byte', async () => {
    const small = Buffer.from('a small plain file\n');
    const large = randomBytes(11 * MiB + 5);
    const deposit = randomBytes(70_000);
    const deposited: Buffer[] = [];
    for await (const part of encrypt([deposit], [archive.publicKey])) deposited.push(part);
    const depositedFile = Buffer.concat(deposited);
    const dropzone = new DropzoneFixture(join(dir, 'dropzone'));
    dropzone.submission('SUB-1', { project: 'PRJ1', datasets: ['DS1'] });
    dropzone.dataset('DS1', {
      submission: 'SUB-1',
      files: { 'small.txt': small, 'big/large.bin': large, 'dep.bin.c4gh': depositedFile },
    });
    const result = await runDatasetImport({
      importId: 'dropzone-dataset-DS1',
      attempt: 1,
      queuedAt: null,
      source: new DropzoneSource({
        name: 'dropzone',
        type: 'dropzone',
        root: dropzone.root,
        importable_statuses: ['completed'],
      }),
      storage: archiveStorage(
        storage,
        { ...archive, publicKeyFile: publicKeyFile(archive.publicKey) },
        sealer,
      ),
      datasetId: 'DS1',
      versions: { provisioner: 'test' },
      reportProgress: () => Promise.resolve(),
      copyPool: pool,
      sourceLimits: DEFAULT_SOURCE_LIMITS,
    });
    // The 11 MiB body went through a sealing thread; the small ones were sealed here.
    expect(sealer.threadCount).toBeGreaterThan(0);
    const keys = (await listKeys(client, bucket, `${result.path}/`)).map((key) =>
      key.slice(result.path.length + 1),
    );
    expect(keys.sort()).toEqual(
      [
        'small.txt',
        'big/large.bin',
        'dep.bin',
        headerPath('small.txt'),
        headerPath('big/large.bin'),
        headerPath('dep.bin'),
        bodyChecksumPath('small.txt'),
        bodyChecksumPath('big/large.bin'),
        bodyChecksumPath('dep.bin'),
        '.provisioner/manifest-sha256.txt',
        '.provisioner/provenance.json',
      ].sort(),
    );
    const provenance = parseProvenance(
      await storage.readObject(`${result.path}/.provisioner/provenance.json`),
    )!;
    const { length: depositedHeader } = (await headerAt(depositedFile))!;
    for (const [path, plain] of [
      ['small.txt', small],
      ['big/large.bin', large],
      ['dep.bin', deposit],
    ] as const) {
      const body = (await storage.readObject(`${result.path}/${path}`))!;
      const header = (await storage.readObject(`${result.path}/${headerPath(path)}`))!;
      expect(body.length).toBe(bodySize(plain.length));
      expect(body.includes(plain.subarray(0, 16))).toBe(false);
      expect(provenance.files.find((file) => file.path === path)).toEqual({
        path,
        size: plain.length,
        sha256: digest('sha256', plain),
      });
      expect((await referenceDecrypt([header, body], secretKeyPath, dir)).equals(plain)).toBe(true);
    }
    // The deposit's body went up byte for byte.
    expect(
      (await storage.readObject(`${result.path}/dep.bin`))!.equals(
        depositedFile.subarray(depositedHeader),
      ),
    ).toBe(true);
    stored = {
      path: result.path,
      plain: { 'small.txt': small, 'big/large.bin': large, 'dep.bin': deposit },
    };
  });

  it('rotate-archive-key re-wraps every header in the bucket (one PutObject each), no body byte rewritten, resuming after a crash', async () => {
    expect(stored).toBeDefined();
    await checkRotation(storage, stored!.path, stored!.plain, archive, dir);
  });
});
