import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { digest, DropzoneFixture, tempDir } from '../../test/support/dropzone-fixture';
import { closeSourceScanner, sourceScanner } from '../sources/source-system';
import { DropzoneSource } from '../sources/dropzone/dropzone.source';
import { FilesystemStorage } from '../storage/filesystem/filesystem-storage';
import { FilesystemStagingArea } from '../storage/filesystem/filesystem-staging-area';
import type { DatasetImportContext } from './dataset-import-context';
import { runDatasetImport } from './dataset-import-pipeline';
// eslint-disable-next-line no-restricted-imports -- the spy replaces the engine's own export
import * as hashingCopy from './copying/hashing-copy';
// eslint-disable-next-line no-restricted-imports -- the spy holds the walk of one directory back
import * as threadedWalk from './copying/threaded-walk';
import { ImportProgress } from '../imports/import-progress';
import { ImportTimeline } from './import-steps';
import { CopyThreadPool } from './copying';
import { REAL_IO_MS } from '../../../../test/support/timeouts';
import { DEFAULT_SOURCE_LIMITS } from '../config/source-config';
import { cachedBytes } from '../../test/support/page-cache';
import { poll } from '../../../../test/support/wait';
import { decrypt, encrypt, generateKeyPair, publicKeyFile } from '@app/crypt4gh';
import { archiveStorage, headerPath } from '../storage/archive-storage';

// Real threads, files or sockets: seconds on a loaded 2-core machine.
jest.setTimeout(REAL_IO_MS);

/** The copy threads of these imports; they change grow-*, touch-* and replace-* files mid-read. */
const pool = new CopyThreadPool(
  2,
  join(__dirname, '../../test/support/source-changing-copy.thread'),
);

/** Batches the copy threads have run so far. */
const threadBatches = (): number => pool.batchesRun;

/** 300 small files in three directories and one large one. */
function manySmallFiles(): Record<string, string | Buffer> {
  const files: Record<string, string | Buffer> = { 'big/large.bin': Buffer.alloc(200_000, 3) };
  for (let i = 0; i < 300; i++)
    files[`part-${i % 3}/f-${i}.txt`] = `content of file ${i}\n`.repeat(i % 7);
  return files;
}

/** Fails (EIO) the first small object a staging area writes at a path `which` picks; the rest are written. */
function failFirstSmallWrite(which: (path: string) => boolean): { failed: boolean } {
  const failure = { failed: false };
  const write = FilesystemStagingArea.prototype.writeSmallObject;
  jest.spyOn(FilesystemStagingArea.prototype, 'writeSmallObject').mockImplementation(function (
    this: FilesystemStagingArea,
    path,
    content,
  ) {
    if (failure.failed || !which(path)) return write.call(this, path, content);
    failure.failed = true;
    return Promise.reject(Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' }));
  });
  return failure;
}

/**
 * Runs `hook` after every chunk the main thread reads, in every file (all of them then go the
 * async path on the main thread, where the hook can wait; with copy threads every file would go
 * to them): returns the context settings that route them there.
 */
function afterEachChunk(hook: (path: string) => Promise<void>): Partial<DatasetImportContext> {
  const copy = hashingCopy.copyWithHashes;
  jest
    .spyOn(hashingCopy, 'copyWithHashes')
    .mockImplementation((source, display, writer, options) =>
      copy(source, display, writer, { ...options, afterChunk: () => hook(display) }),
    );
  return { copyPool: undefined };
}

const FILES = { 'a.txt': 'alpha', 'nested/deep/b.bin': Buffer.alloc(300_000, 7), 'empty.dat': '' };

describe('runDatasetImport', () => {
  let base: string;
  let dropzone: DropzoneFixture;
  let storage: FilesystemStorage;
  let source: DropzoneSource;
  let progress: ImportProgress[];

  beforeEach(() => {
    base = tempDir('pipeline');
    dropzone = new DropzoneFixture(join(base, 'dropzone'));
    storage = new FilesystemStorage(join(base, 'storage'));
    source = new DropzoneSource({
      name: 'dropzone',
      type: 'dropzone',
      root: dropzone.root,
      importable_statuses: ['completed'],
    });
    progress = [];
  });

  // Loading the threads' TypeScript takes seconds on a busy machine: not the tests' time.
  beforeAll(() => Promise.all([sourceScanner().start(), pool.start()]), 30_000);

  afterEach(() => jest.restoreAllMocks());

  afterAll(async () => {
    await pool.close();
    await closeSourceScanner();
  });

  function context(
    datasetId: string,
    overrides: Partial<DatasetImportContext> = {},
  ): DatasetImportContext {
    return {
      importId: `dropzone-dataset-${datasetId}`,
      attempt: 1,
      queuedAt: null,
      source,
      storage,
      datasetId,
      versions: { provisioner: 'test' },
      reportProgress: (p) => {
        progress.push(p);
        return Promise.resolve();
      },
      bufferBytes: 64 * 1024,
      copyPool: pool,
      sourceLimits: DEFAULT_SOURCE_LIMITS,
      ...overrides,
    };
  }

  function withDataset(
    id: string,
    spec: Partial<Parameters<DropzoneFixture['dataset']>[1]> = {},
  ): void {
    dropzone.submission('SUB-1', { project: 'PRJ1', datasets: [id] });
    dropzone.dataset(id, { submission: 'SUB-1', files: FILES, ...spec });
  }

  /**
   * Runs `change` once, when the copy of `path` is handed to a copy thread: preflight's walk has
   * vetted the file by then (a file is staged only once it has), and the thread opens it next.
   */
  function beforeCopyOf(path: string, change: () => void): void {
    const openStaging = storage.openStaging.bind(storage);
    let changed = false;
    storage.openStaging = async (...args) => {
      const area = await openStaging(...args);
      const local = area.localFiles!;
      const prepare = local.prepare.bind(local);
      Object.assign(local, {
        prepare: (relative: string) => {
          if (relative === path && !changed) {
            changed = true;
            change();
          }
          return prepare(relative);
        },
      });
      return area;
    };
  }

  async function rejection(
    id: string,
  ): Promise<{ code: string; details: { code: string; path?: string }[] }> {
    const error = (await runDatasetImport(context(id)).catch((e: unknown) => e)) as {
      name: string;
      code: string;
      details: { code: string; path?: string }[];
    };
    expect(error.name).toBe('ImportRejectedError');
    expect(existsSync(join(storage.absolute('projects/PRJ1/SUB-1/data/raw'), id))).toBe(false);
    expect(await storage.listStaging()).toEqual([]);
    return error;
  }

  it('copies a sparse source file byte for byte, its holes written as zeros (docs/decisions: sparse source files)', async () => {
    const size = 16 * 1024 * 1024;
    withDataset('DS-SPARSE', { files: { 'sparse.bin': Buffer.alloc(size) } });
    // The same bytes as a file that is all hole: a depositor's cheap 16 MiB.
    const sourceFile = join(dropzone.datasetDir('DS-SPARSE'), 'payload/sparse.bin');
    rmSync(sourceFile);
    execFileSync('truncate', ['-s', String(size), sourceFile]);
    expect(statSync(sourceFile).blocks * 512).toBeLessThan(size / 16);
    const result = await runDatasetImport(context('DS-SPARSE'));
    expect(result).toMatchObject({ files: 1, bytes: size, copied: true });
    const copy = join(storage.absolute(result.path), 'sparse.bin');
    expect(statSync(copy).size).toBe(size);
    expect(statSync(copy).blocks * 512).toBeGreaterThanOrEqual(size);
    expect(digest('sha256', readFileSync(copy))).toBe(digest('sha256', Buffer.alloc(size)));
  });

  it('publishes a verified, read-only copy with manifest and provenance, and reports progress', async () => {
    withDataset('DS1', { manifests: ['sha256', 'md5'] });
    const result = await runDatasetImport(context('DS1'));
    expect(result).toEqual({
      path: 'projects/PRJ1/SUB-1/data/raw/DS1',
      files: 3,
      bytes: 300_005,
      copied: true,
    });
    const target = storage.absolute(result.path);
    expect(readFileSync(join(target, 'nested/deep/b.bin')).equals(FILES['nested/deep/b.bin'])).toBe(
      true,
    );
    expect(statSync(join(target, 'a.txt')).mode & 0o222).toBe(0);
    expect(statSync(target).mode & 0o222).toBe(0);
    const manifest = readFileSync(join(target, '.provisioner/manifest-sha256.txt'), 'utf8');
    expect(manifest).toBe(
      `${digest('sha256', 'alpha')}  a.txt\n${digest('sha256', '')}  empty.dat\n${digest('sha256', FILES['nested/deep/b.bin'])}  nested/deep/b.bin\n`,
    );
    const provenance = JSON.parse(
      readFileSync(join(target, '.provisioner/provenance.json'), 'utf8'),
    );
    expect(provenance).toMatchObject({
      source: { name: 'dropzone', type: 'dropzone' },
      submission: { ref: 'SUB-1', project: 'PRJ1' },
      dataset: { dataset_id: 'DS1', title: 'Dataset DS1' },
      import: { id: 'dropzone-dataset-DS1', attempt: 1 },
      totals: { files: 3, bytes: 300_005 },
      verification: { result: 'passed', manifests: ['sha256', 'md5'], computed: ['sha256', 'md5'] },
    });
    expect(provenance.files).toContainEqual({
      path: 'a.txt',
      size: 5,
      sha256: digest('sha256', 'alpha'),
      md5: digest('md5', 'alpha'),
    });
    expect(readFileSync(storage.absolute('projects/PRJ1/SUB-1/submission.json'), 'utf8')).toContain(
      '"ref": "SUB-1"',
    );
    expect(progress[progress.length - 1]).toEqual({
      files_done: 3,
      files_total: 3,
      bytes_done: 300_005,
      bytes_total: 300_005,
    });
    expect(await storage.listStaging()).toEqual([]);
  });

  it('accepts an MD5-only manifest and still records SHA-256', async () => {
    withDataset('MD5', { manifests: ['md5'] });
    const result = await runDatasetImport(context('MD5'));
    const provenance = JSON.parse(
      readFileSync(join(storage.absolute(result.path), '.provisioner/provenance.json'), 'utf8'),
    );
    expect(provenance.files[0]).toHaveProperty('sha256');
    expect(provenance.verification.manifests).toEqual(['md5']);
  });

  it('a re-run after a publish by the same import copies nothing and succeeds', async () => {
    withDataset('DS1');
    await runDatasetImport(context('DS1'));
    const again = await runDatasetImport(context('DS1', { attempt: 2 }));
    expect(again).toMatchObject({ copied: false, files: 3 });
  });

  it('rejects when the target exists without this import having made it, and leaves it alone', async () => {
    withDataset('DS1');
    mkdirSync(storage.absolute('projects/PRJ1/SUB-1/data/raw/DS1'), { recursive: true });
    writeFileSync(join(storage.absolute('projects/PRJ1/SUB-1/data/raw/DS1'), 'mine'), 'x');
    await expect(runDatasetImport(context('DS1'))).rejects.toMatchObject({ code: 'target_exists' });
    expect(readdirSync(storage.absolute('projects/PRJ1/SUB-1/data/raw/DS1'))).toEqual(['mine']);
  });

  it('rejects a checksum mismatch with every mismatching file listed, after copying all of them', async () => {
    const wrong = `${'0'.repeat(64)}  a.txt\n${digest('sha256', '')}  empty.dat\n${'1'.repeat(64)}  nested/deep/b.bin\n`;
    withDataset('BAD', { manifestText: { sha256: wrong } });
    const error = await rejection('BAD');
    expect(error.code).toBe('checksum_mismatch');
    expect(error.details.map((d) => d.path).sort()).toEqual(['a.txt', 'nested/deep/b.bin']);
  });

  it('rejects missing and extra files, together', async () => {
    withDataset('MIX', {
      manifestText: {
        sha256: `${digest('sha256', 'alpha')}  a.txt\n${digest('sha256', 'x')}  ghost.txt\n`,
      },
    });
    const error = await rejection('MIX');
    expect(error.details.map((d) => `${d.code}:${d.path}`).sort()).toEqual([
      'extra_file:empty.dat',
      'extra_file:nested/deep/b.bin',
      'missing_file:ghost.txt',
    ]);
  });

  it('asks access(2) about a file whose permission bits refuse reading: root reads it, others are refused', async () => {
    withDataset('LOCKED');
    chmodSync(join(dropzone.root, 'datasets/LOCKED/payload/a.txt'), 0o000);
    if (process.getuid?.() === 0) {
      // Root's override, which the bits alone would not show.
      const result = await runDatasetImport(context('LOCKED'));
      expect(result).toMatchObject({ files: 3, copied: true });
    } else {
      const error = await rejection('LOCKED');
      expect(error.details.map((d) => `${d.code}:${d.path}`)).toEqual(['unreadable:a.txt']);
    }
  });

  it('rejects symlinks, FIFOs, bad names and the reserved name found in the payload', async () => {
    withDataset('ODD');
    const payload = join(dropzone.datasetDir('ODD'), 'payload');
    symlinkSync('/etc/hostname', join(payload, 'link'));
    execFileSync('mkfifo', [join(payload, 'fifo')]);
    writeFileSync(join(payload, 'bell\u0007'), '');
    mkdirSync(join(payload, '.provisioner'));
    writeFileSync(Buffer.concat([Buffer.from(join(payload, 'latin1-')), Buffer.from([0xe9])]), '');
    const error = await rejection('ODD');
    expect(error.code).toBe('preflight_failed');
    expect(error.details.map((d) => d.code).sort()).toEqual([
      'control_character',
      'fifo',
      'invalid_utf8',
      'reserved_name',
      'symlink',
    ]);
  });

  it.each([
    ['../outside.txt', 'manifest_dot_segment'],
    ['/etc/passwd', 'manifest_absolute_path'],
    ['.provisioner/provenance.json', 'manifest_reserved_name'],
  ])('rejects the manifest path %j', async (path, code) => {
    withDataset('MAN', {
      manifestText: {
        sha256: `${digest('sha256', 'alpha')}  a.txt\n${digest('sha256', 'alpha')}  ${path}\n`,
      },
      files: { 'a.txt': 'alpha' },
    });
    const error = await rejection('MAN');
    expect(error.details).toContainEqual(expect.objectContaining({ code, path }));
  });

  it('fails (retryably) when a file changes during the copy, and publishes nothing', async () => {
    withDataset('CHG');
    const path = join(dropzone.datasetDir('CHG'), 'payload/nested/deep/b.bin');
    let touched = false;
    const error = await runDatasetImport(
      context(
        'CHG',
        afterEachChunk(() => {
          if (!touched) writeFileSync(path, Buffer.alloc(300_001, 9));
          touched = true;
          return Promise.resolve();
        }),
      ),
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'ImportTransientError', code: 'source_changed' });
    expect(await storage.exists('projects/PRJ1/SUB-1/data/raw/CHG')).toBe(false);
    // Kept for the retry, which keeps what is still valid in it.
    expect(await storage.listStaging()).toEqual([
      expect.stringMatching(/^dropzone-dataset-CHG~data~a1-/),
    ]);
  });

  it('stages each attempt in its own area, adopting earlier attempts of the same import only', async () => {
    withDataset('ATT', { files: { 'a.txt': 'alpha' } });
    const earlier = await storage.openStaging('dropzone-dataset-ATT~data~a1-dead-0000');
    await earlier.writeSmallObject('half.bin', 'half');
    await storage.openStaging('dropzone-dataset-OTHER~data~a1-live-0000');
    await storage.openStaging('dropzone-dataset-ATT~collection~a1-dead-0000');
    const seen: string[] = [];
    const result = await runDatasetImport(
      context('ATT', {
        attempt: 2,
        ...afterEachChunk(async () => void seen.push(...(await storage.listStaging()))),
      }),
    );
    expect(seen).toContainEqual(expect.stringMatching(/^dropzone-dataset-ATT~data~a2-/));
    expect(seen).not.toContain('dropzone-dataset-ATT~data~a1-dead-0000');
    expect(seen).not.toContain('dropzone-dataset-ATT~collection~a1-dead-0000');
    expect(await storage.listStaging()).toEqual(['dropzone-dataset-OTHER~data~a1-live-0000']);
    // What the dead attempt left unrecorded is not published.
    expect(readdirSync(storage.absolute(result.path)).sort()).toEqual(['.provisioner', 'a.txt']);
  });

  it('never publishes an area that was removed underneath the attempt (another replica cleaning up)', async () => {
    withDataset('LOST', { files: { 'a.txt': 'alpha' } });
    let removed = false;
    const error = await runDatasetImport(
      context(
        'LOST',
        afterEachChunk(async () => {
          if (removed) return;
          removed = true;
          for (const name of await storage.listStaging()) await storage.removeStaging(name);
        }),
      ),
    ).catch((e: unknown) => e);
    // Writing .provisioner/ re-created the area (mkdir -p); publishing it would lose a.txt.
    expect(error).toMatchObject({ code: 'staging_lost' });
    expect(await storage.exists('projects/PRJ1/SUB-1/data/raw/LOST')).toBe(false);
    expect(await storage.listStaging()).toEqual([]);
  });

  it('rejects a dataset that is not ready, and a submission withdrawn during the copy', async () => {
    withDataset('NR', { ready: false });
    await expect(runDatasetImport(context('NR'))).rejects.toMatchObject({
      code: 'preflight_failed',
      details: [expect.objectContaining({ code: 'marker_missing' })],
    });
    withDataset('WD');
    let withdrawn = false;
    const error = await runDatasetImport(
      context(
        'WD',
        afterEachChunk(() => {
          if (!withdrawn)
            dropzone.submission('SUB-1', { status: 'cancelled', datasets: ['NR', 'WD'] });
          withdrawn = true;
          return Promise.resolve();
        }),
      ),
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'submission_withdrawn' });
    expect(await storage.exists('projects/PRJ1/SUB-1/data/raw/WD')).toBe(false);
  });
  describe('small files on copy threads', () => {
    it('asks the area to start writing out what it copied while the copy goes on (flush ahead)', async () => {
      const files: Record<string, string> = {};
      for (let i = 0; i < 2_100; i++) files[`part-${i % 4}/f-${i}.txt`] = `${i}`;
      withDataset('AHEAD', { files });
      const ahead = jest.spyOn(FilesystemStagingArea.prototype, 'flushAhead');
      const result = await runDatasetImport(context('AHEAD'));
      expect(ahead).toHaveBeenCalled();
      expect(readFileSync(join(storage.absolute(result.path), 'part-1/f-2093.txt'), 'utf8')).toBe(
        '2093',
      );
    });

    it('records nothing once every file is copied: an attempt failing in its flush step leaves the last ones to the next, which publishes every file once', async () => {
      withDataset('NOREC', { files: manySmallFiles() });
      // The flush step's first write (.provisioner/), not the collection's submission.json.
      failFirstSmallWrite((path) => path.startsWith('.provisioner/'));
      // Every file may be recorded whatever its change time (else fresh files never are).
      await expect(runDatasetImport(context('NOREC', { recentChangeMs: 0 }))).rejects.toMatchObject(
        { code: 'EIO' },
      );
      const [area] = await storage.listStaging();
      const journal = storage.absolute(`.staging/${area}/.provisioner/staged-files.jsonl`);
      // At most what was due while the copy went on (every second): never the last files.
      const recorded = existsSync(journal)
        ? readFileSync(journal, 'utf8').split('\n').filter(Boolean).length
        : 0;
      expect(recorded).toBeLessThan(301);
      const result = await runDatasetImport(context('NOREC', { attempt: 2, recentChangeMs: 0 }));
      expect(result.files).toBe(301);
      const provenance = JSON.parse(
        readFileSync(join(storage.absolute(result.path), '.provisioner/provenance.json'), 'utf8'),
      );
      expect(provenance.import.kept_from_earlier_attempts.files).toBe(recorded);
      expect(readFileSync(join(storage.absolute(result.path), 'part-2/f-299.txt'), 'utf8')).toBe(
        'content of file 299\n'.repeat(299 % 7),
      );
      expect(await storage.listStaging()).toEqual([]);
    });

    it('copies them on the threads, with both checksums of every file in the provenance', async () => {
      const files = manySmallFiles();
      withDataset('MANY', { files, manifests: ['sha256', 'md5'] });
      const before = threadBatches();
      const result = await runDatasetImport(context('MANY'));
      expect(threadBatches()).toBeGreaterThan(before);
      const target = storage.absolute(result.path);
      const provenance = JSON.parse(
        readFileSync(join(target, '.provisioner/provenance.json'), 'utf8'),
      );
      expect(provenance.totals.files).toBe(301);
      expect(
        Object.fromEntries(
          (provenance.files as { path: string; sha256: string; md5: string }[]).map((f) => [
            f.path,
            [f.sha256, f.md5],
          ]),
        ),
      ).toEqual(
        Object.fromEntries(
          Object.entries(files).map(([path, content]) => [
            path,
            [digest('sha256', content), digest('md5', content)],
          ]),
        ),
      );
      for (const path of ['part-0/f-3.txt', 'part-2/f-299.txt']) {
        expect(readFileSync(join(target, path)).equals(Buffer.from(files[path]))).toBe(true);
        expect(statSync(join(target, path)).mode & 0o222).toBe(0);
      }
      expect(progress[progress.length - 1]).toMatchObject({ files_done: 301, files_total: 301 });
    });

    it('writes files of 1 MiB and more past the page cache when storage asks it to, byte for byte', async () => {
      storage = new FilesystemStorage(join(base, 'storage'), { directWriteMinBytes: 1024 * 1024 });
      const files = {
        'big/odd.bin': randomBytes(3 * 1024 * 1024 + 123),
        'big/exact.bin': randomBytes(1024 * 1024),
        'small.txt': 'small file, through the cache',
      };
      withDataset('DIRECT', { files, manifests: ['sha256', 'md5'] });
      const result = await runDatasetImport(context('DIRECT'));
      const target = storage.absolute(result.path);
      // fincore(1) before anything reads them back (a read would bring them into the cache).
      expect(cachedBytes(join(target, 'big/odd.bin'))).toBe(0);
      expect(cachedBytes(join(target, 'big/exact.bin'))).toBe(0);
      expect(cachedBytes(join(target, 'small.txt'))).toBeGreaterThan(0);
      for (const [path, content] of Object.entries(files)) {
        expect(readFileSync(join(target, path)).equals(Buffer.from(content))).toBe(true);
        expect(statSync(join(target, path)).mode & 0o222).toBe(0);
      }
      expect(result).toMatchObject({ files: 3, bytes: 4 * 1024 * 1024 + 123 + 29 });
    });

    it('fails (retryably) when a small file changes while a thread copies it, publishing nothing', async () => {
      withDataset('TCHG', { files: { ...manySmallFiles(), 'part-1/grow-late.txt': 'alpha' } });
      const error = await runDatasetImport(context('TCHG')).catch((e: unknown) => e);
      expect(error).toMatchObject({
        name: 'ImportTransientError',
        code: 'source_changed',
        details: [expect.objectContaining({ path: 'part-1/grow-late.txt' })],
      });
      expect(await storage.exists('projects/PRJ1/SUB-1/data/raw/TCHG')).toBe(false);
      expect(await storage.listStaging()).toHaveLength(1);
    });

    it('fails with source_changed when a small file was replaced by a symlink after preflight', async () => {
      withDataset('TLNK', { files: manySmallFiles() });
      const victim = join(dropzone.datasetDir('TLNK'), 'payload/part-2/f-5.txt');
      beforeCopyOf('part-2/f-5.txt', () => {
        rmSync(victim);
        symlinkSync('/etc/hostname', victim);
      });
      const error = await runDatasetImport(context('TLNK')).catch((e: unknown) => e);
      expect(error).toMatchObject({
        name: 'ImportTransientError',
        code: 'source_changed',
        details: [
          { code: 'source_changed', path: 'part-2/f-5.txt', message: 'replaced by a symlink' },
        ],
      });
      expect(await storage.exists('projects/PRJ1/SUB-1/data/raw/TLNK')).toBe(false);
      expect(await storage.listStaging()).toHaveLength(1);
    });

    it('fails with source_changed when a small file changed size between preflight and copy', async () => {
      withDataset('TSIZ', { files: manySmallFiles() });
      const victim = join(dropzone.datasetDir('TSIZ'), 'payload/part-0/f-9.txt');
      beforeCopyOf('part-0/f-9.txt', () => writeFileSync(victim, 'shorter'));
      await expect(runDatasetImport(context('TSIZ'))).rejects.toMatchObject({
        name: 'ImportTransientError',
        code: 'source_changed',
        message: 'part-0/f-9.txt changed size between preflight and copy',
      });
      expect(await storage.listStaging()).toHaveLength(1);
    });

    it('rejects a checksum mismatch of small files copied on threads', async () => {
      const files = manySmallFiles();
      const manifest = Object.entries(files)
        .map(([path, content]) =>
          path === 'part-1/f-4.txt' || path === 'part-2/f-200.txt'
            ? `${'0'.repeat(64)}  ${path}\n`
            : `${digest('sha256', content)}  ${path}\n`,
        )
        .join('');
      withDataset('TBAD', { files, manifestText: { sha256: manifest } });
      const error = (await runDatasetImport(context('TBAD')).catch((e: unknown) => e)) as {
        name: string;
        code: string;
        details: { path: string }[];
      };
      expect(error).toMatchObject({ name: 'ImportRejectedError', code: 'checksum_mismatch' });
      expect(error.details.map((d) => d.path).sort()).toEqual([
        'part-1/f-4.txt',
        'part-2/f-200.txt',
      ]);
      expect(await storage.exists('projects/PRJ1/SUB-1/data/raw/TBAD')).toBe(false);
      expect(await storage.listStaging()).toEqual([]);
    });

    it('without copy threads (IMPORT_COPY_THREADS=0) copies them on the main thread', async () => {
      const files = manySmallFiles();
      withDataset('MAIN', { files, manifests: ['md5'] });
      const before = threadBatches();
      const result = await runDatasetImport(context('MAIN', { copyPool: undefined }));
      expect(threadBatches()).toBe(before);
      expect(result).toMatchObject({ files: 301, copied: true });
      const provenance = JSON.parse(
        readFileSync(join(storage.absolute(result.path), '.provisioner/provenance.json'), 'utf8'),
      );
      expect(provenance.files).toContainEqual({
        path: 'part-1/f-10.txt',
        size: Buffer.byteLength(files['part-1/f-10.txt']),
        sha256: digest('sha256', files['part-1/f-10.txt']),
        md5: digest('md5', files['part-1/f-10.txt']),
      });
    });
  });

  describe('staging while preflight checks (docs/decisions/stage-while-checking.md)', () => {
    /**
     * The walk of the directories in `late/` waits until a first file is staged, so the problems
     * there (and the missing files, found once the walk is over) come after staging started.
     */
    function walkLateAfterFirstCopy(alsoAwait?: () => Promise<void>): { copied: () => number } {
      let copied = 0;
      let firstCopy!: () => void;
      const staged = new Promise<void>((resolve) => (firstCopy = resolve));
      const walk = threadedWalk.walkOnThreads;
      jest.spyOn(threadedWalk, 'walkOnThreads').mockImplementation((walkPool, signal) => {
        const walker = walk(walkPool, signal);
        return async (root, directories) => {
          if (directories.some((d) => d.relative.startsWith('late/'))) {
            await staged;
            await alsoAwait?.();
          }
          return walker(root, directories);
        };
      });
      meter = {
        addBytes: () => undefined,
        addFiles: (n) => {
          copied += n;
          firstCopy();
        },
      };
      return { copied: () => copied };
    }

    let meter: DatasetImportContext['copyMeter'];

    /** What storage showed once the collection was staged: its area, and whether it was published. */
    interface CollectionSeen {
      area: string;
      published: boolean;
    }

    /**
     * Before the late walk: waits until the submission's collection is staged in its own area
     * (submission.json and data/raw written), and records what storage shows at that moment.
     */
    function collectionStagedDuringWalk(): {
      seen: () => CollectionSeen | undefined;
      wait: () => Promise<void>;
    } {
      let seen: CollectionSeen | undefined;
      return {
        seen: () => seen,
        wait: async () => {
          const stagingRoot = join(base, 'storage', '.staging');
          const area = await poll(
            async () =>
              (await storage.listStaging()).find(
                (name) =>
                  name.includes('~collection~') &&
                  existsSync(join(stagingRoot, name, 'submission.json')) &&
                  existsSync(join(stagingRoot, name, 'data', 'raw')),
              ),
            "the submission's collection staged during the walk",
          );
          seen = { area, published: existsSync(storage.absolute('projects/PRJ1')) };
        },
      };
    }

    it('a refusal found while files stage lists every problem, leaves staging empty and makes nothing', async () => {
      const files: Record<string, string> = { 'late/deep/kept.txt': 'late file' };
      for (let i = 0; i < 40; i++) files[`early-${i % 2}/f-${i}.txt`] = `early file ${i}`;
      const manifest =
        Object.entries(files)
          .map(([path, content]) => `${digest('sha256', content)}  ${path}\n`)
          .join('') +
        `${digest('sha256', 'x')}  gone.txt\n${digest('sha256', 'y')}  late/gone-too.txt\n`;
      withDataset('LATE', { files, manifestText: { sha256: manifest } });
      const payload = join(dropzone.datasetDir('LATE'), 'payload');
      writeFileSync(join(payload, 'late/deep/unlisted.txt'), 'not in the manifest');
      symlinkSync('/etc/hostname', join(payload, 'late/deep/link'));
      const collection = collectionStagedDuringWalk();
      const staging = walkLateAfterFirstCopy(collection.wait);
      const error = (await runDatasetImport(context('LATE', { copyMeter: meter })).catch(
        (e: unknown) => e,
      )) as { name: string; code: string; details: { code: string; path?: string }[] };
      expect(staging.copied()).toBeGreaterThan(0);
      expect(error).toMatchObject({ name: 'ImportRejectedError', code: 'preflight_failed' });
      expect(error.details.map((d) => `${d.code}:${d.path}`).sort()).toEqual([
        'extra_file:late/deep/unlisted.txt',
        'missing_file:gone.txt',
        'missing_file:late/gone-too.txt',
        'symlink:late/deep/link',
      ]);
      // The collection was staged meanwhile, privately, and goes with the rest.
      expect(collection.seen()).toEqual({ area: expect.any(String), published: false });
      expect(await storage.listStaging()).toEqual([]);
      // Not the dataset, nor the submission's collection: nothing is made before the checks pass.
      expect(existsSync(storage.absolute('projects/PRJ1'))).toBe(false);
    });

    it('publishes what it staged during the walk once every check has passed, each file once', async () => {
      const files: Record<string, string> = { 'late/deep/kept.txt': 'late file' };
      for (let i = 0; i < 40; i++) files[`early-${i % 2}/f-${i}.txt`] = `early file ${i}`;
      withDataset('LATE-OK', { files });
      const collection = collectionStagedDuringWalk();
      const staging = walkLateAfterFirstCopy(collection.wait);
      const result = await runDatasetImport(context('LATE-OK', { copyMeter: meter }));
      expect(result).toMatchObject({ files: 41, copied: true });
      // Staged while the walk went on, published once the checks had passed, with the dataset in it.
      expect(collection.seen()).toEqual({ area: expect.any(String), published: false });
      const submission = JSON.parse(
        readFileSync(storage.absolute('projects/PRJ1/SUB-1/submission.json'), 'utf8'),
      ) as { ref: string; source: { name: string } };
      expect(submission).toMatchObject({ ref: 'SUB-1', source: { name: 'dropzone' } });
      expect(result.path).toBe('projects/PRJ1/SUB-1/data/raw/LATE-OK');
      expect(staging.copied()).toBe(41);
      const target = storage.absolute(result.path);
      expect(readFileSync(join(target, 'late/deep/kept.txt'), 'utf8')).toBe('late file');
      expect(readFileSync(join(target, 'early-1/f-39.txt'), 'utf8')).toBe('early file 39');
      expect(progress[progress.length - 1]).toEqual({
        files_done: 41,
        files_total: 41,
        bytes_done: result.bytes,
        bytes_total: result.bytes,
      });
      expect(await storage.listStaging()).toEqual([]);
    });

    it('in archive mode, encrypts on the copy threads what the walk has vetted, re-wraps deposits once it is over, and publishes after every check', async () => {
      const archive = generateKeyPair();
      const note = Buffer.from('a deposited note\n');
      const files: Record<string, string | Buffer> = { 'late/deep/kept.txt': 'late file' };
      for (let i = 0; i < 40; i++) files[`early-${i % 2}/f-${i}.txt`] = `early file ${i}`;
      files['early-0/note.txt.c4gh'] = await sealedFor(note, archive.publicKey);
      withDataset('LATE-C4GH', { files });
      const staging = walkLateAfterFirstCopy();
      const archived = archiveStorage(storage, {
        ...archive,
        publicKeyFile: publicKeyFile(archive.publicKey),
      });
      const result = await runDatasetImport(
        context('LATE-C4GH', { storage: archived, copyMeter: meter }),
      );
      expect(result).toMatchObject({ files: 42, copied: true });
      expect(staging.copied()).toBe(42);
      const target = storage.absolute(result.path);
      const plaintext = async (path: string): Promise<Buffer> => {
        const header = readFileSync(join(target, headerPath(path)));
        const parts: Buffer[] = [];
        for await (const part of decrypt([readFileSync(join(target, path))], [archive.secretKey], {
          header,
        }))
          parts.push(part);
        return Buffer.concat(parts);
      };
      expect((await plaintext('late/deep/kept.txt')).toString()).toBe('late file');
      expect((await plaintext('early-1/f-39.txt')).toString()).toBe('early file 39');
      expect((await plaintext('early-0/note.txt')).equals(note)).toBe(true);
      // The deposit counts by its plain-text: re-wrapped after the walk's sizes were summed.
      const plainBytes = Object.entries(files)
        .filter(([path]) => !path.endsWith('.c4gh'))
        .reduce((sum, [, content]) => sum + Buffer.byteLength(content), note.length);
      expect(result.bytes).toBe(plainBytes);
      expect(await storage.listStaging()).toEqual([]);
    });
  });

  it("times every step on the attempt's timeline, plan and stage overlapping, in the line the bench reads", async () => {
    withDataset('STEPS', { files: manySmallFiles() });
    const timeline = new ImportTimeline();
    await runDatasetImport(context('STEPS', { timeline }));
    const line = `import dropzone-dataset-STEPS steps (ms): ${timeline.toString()}`;
    // The pattern scripts/bench/suites/imports.bench.ts reads the worker's line with.
    const [, id, steps] = /import (\S+) steps \(ms\): ([^"]+)/.exec(line)!;
    expect(id).toBe('dropzone-dataset-STEPS');
    expect(steps).toMatch(/^resolve=\d+ plan=\d+ stage=\d+ verify=\d+ flush=\d+ publish=\d+$/);
  });

  it('makes the collection once the checks have passed when staging it ahead failed, leaving no area behind', async () => {
    withDataset('AHEAD-FAILS', { files: manySmallFiles() });
    const failure = failFirstSmallWrite((path) => path === 'submission.json');
    const result = await runDatasetImport(context('AHEAD-FAILS'));
    expect(failure.failed).toBe(true);
    expect(result).toMatchObject({ files: 301, copied: true });
    expect(
      JSON.parse(readFileSync(storage.absolute('projects/PRJ1/SUB-1/submission.json'), 'utf8')),
    ).toMatchObject({ ref: 'SUB-1' });
    expect(await storage.listStaging()).toEqual([]);
  });

  describe('staging while preflight checks: free space', () => {
    it('stages no more during the walk than storage had free, and fails insufficient_space (retried) after it', async () => {
      const files: Record<string, string> = {};
      for (let i = 0; i < 30; i++) files[`part-${i % 3}/f-${i}.txt`] = 'x'.repeat(100);
      withDataset('ROOM', { files });
      // Room for the margin preflight keeps (64 MiB) and 450 bytes: four of the files at most.
      storage.freeBytes = () => Promise.resolve(64 * 1024 * 1024 + 450);
      await expect(runDatasetImport(context('ROOM'))).rejects.toMatchObject({
        name: 'ImportTransientError',
        code: 'insufficient_space',
      });
      const [area] = await storage.listStaging();
      const staged = execFileSync('find', [storage.absolute(`.staging/${area}`), '-name', 'f-*'])
        .toString()
        .split('\n')
        .filter(Boolean);
      expect(staged.length).toBeLessThanOrEqual(4);
      expect(existsSync(storage.absolute('projects/PRJ1'))).toBe(false);
    });
  });

  describe('resuming what an earlier attempt staged', () => {
    const MIB = 1024 * 1024;
    /** Twelve files of 2 MiB (each copied on its own) and one small one. */
    const RESUMABLE: Record<string, Buffer> = Object.fromEntries([
      ...Array.from({ length: 12 }, (_, i) => [`data/f-${i}.bin`, Buffer.alloc(2 * MIB, i + 1)]),
      ['small.txt', Buffer.from('small')],
    ]);
    const TOTAL = 24 * MIB + 5;

    /** Counts what an attempt copies, and aborts `stop` once `stopAfter` files are copied. */
    function meter(stop?: AbortController, stopAfter = Infinity) {
      const copied = { files: 0, bytes: 0 };
      return {
        copied,
        copyMeter: {
          addBytes: (n: number) => void (copied.bytes += n),
          addFiles: (n: number) => {
            copied.files += n;
            if (copied.files >= stopAfter) stop?.abort();
          },
        },
      };
    }

    /** Attempt 1, stopped (as by SIGTERM) once three files are copied. */
    async function stoppedAttempt(id: string, overrides: Partial<DatasetImportContext> = {}) {
      const stop = new AbortController();
      const first = meter(stop, 3);
      const error = await runDatasetImport(
        context(id, {
          signal: stop.signal,
          copyMeter: first.copyMeter,
          recentChangeMs: 0,
          ...overrides,
        }),
      ).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'ImportStoppedError' });
      const [area] = await storage.listStaging();
      expect(area).toMatch(new RegExp(`^dropzone-dataset-${id}~data~a1-`));
      const journalPath = storage.absolute(`.staging/${area}/.provisioner/staged-files.jsonl`);
      const journal = existsSync(journalPath) ? readFileSync(journalPath, 'utf8') : '';
      const recorded = journal
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { path: string; size: number });
      return { copied: first.copied, recorded };
    }

    it.each([
      ['on the copy threads', {}],
      ['on the main thread (as on S3)', { copyPool: undefined }],
    ])(
      'a stopped attempt records what it copied; the next keeps it and copies only the rest (%s)',
      async (_how, overrides: Partial<DatasetImportContext>) => {
        withDataset('RES', { files: RESUMABLE, manifests: ['sha256', 'md5'] });
        const { copied, recorded } = await stoppedAttempt('RES', overrides);
        expect(recorded.length).toBeGreaterThanOrEqual(3);
        expect(copied.bytes).toBeLessThan(TOTAL);
        const keptBytes = recorded.reduce((sum, file) => sum + file.size, 0);

        const second = meter();
        const result = await runDatasetImport(
          context('RES', {
            attempt: 2,
            copyMeter: second.copyMeter,
            recentChangeMs: 0,
            ...overrides,
          }),
        );
        expect(result).toMatchObject({ files: 13, bytes: TOTAL, copied: true });
        // Only what was not recorded is copied again.
        expect(second.copied).toEqual({ files: 13 - recorded.length, bytes: TOTAL - keptBytes });
        const target = storage.absolute(result.path);
        for (const [path, content] of Object.entries(RESUMABLE))
          expect(readFileSync(join(target, path)).equals(content)).toBe(true);
        const provenance = JSON.parse(
          readFileSync(join(target, '.provisioner/provenance.json'), 'utf8'),
        );
        expect(provenance.import).toMatchObject({
          attempt: 2,
          kept_from_earlier_attempts: { files: recorded.length, bytes: keptBytes },
        });
        expect(provenance.files).toHaveLength(13);
        expect(readdirSync(join(target, '.provisioner')).sort()).toEqual([
          'manifest-sha256.txt',
          'provenance.json',
        ]);
        expect(await storage.listStaging()).toEqual([]);
      },
    );

    it('copies a kept file again when its source changed since, and one whose staged copy did', async () => {
      withDataset('CHANGED', { files: RESUMABLE });
      const { recorded } = await stoppedAttempt('CHANGED');
      // Which files the stopped attempt recorded, and in what order, is not fixed: the walk hands
      // them over as it finds them (small.txt may come among the first), and copies end in any
      // order. Only that at least three are recorded is.
      expect(recorded.length).toBeGreaterThanOrEqual(3);
      const [changedAtSource, damagedInStaging] = recorded.map((file) => file.path);
      // The depositor replaced a file (and its manifest line) after it was copied.
      const newer = Buffer.alloc(2 * MIB, 0xee);
      const sourcePath = join(dropzone.datasetDir('CHANGED'), 'payload', changedAtSource);
      writeFileSync(sourcePath, newer);
      const manifestPath = join(dropzone.datasetDir('CHANGED'), 'manifest-sha256.txt');
      writeFileSync(
        manifestPath,
        readFileSync(manifestPath, 'utf8').replace(
          digest('sha256', RESUMABLE[changedAtSource]),
          digest('sha256', newer),
        ),
      );
      // Something shortened a staged copy (by a byte: storage checks a kept copy's size, not its
      // content, and a 5-byte `short` written over small.txt's `small` would not be noticed).
      const [area] = await storage.listStaging();
      const staged = storage.absolute(`.staging/${area}/${damagedInStaging}`);
      chmodSync(staged, 0o644);
      truncateSync(staged, RESUMABLE[damagedInStaging].length - 1);

      const second = meter();
      const result = await runDatasetImport(
        context('CHANGED', { attempt: 2, copyMeter: second.copyMeter, recentChangeMs: 0 }),
      );
      const target = storage.absolute(result.path);
      expect(readFileSync(join(target, changedAtSource)).equals(newer)).toBe(true);
      expect(readFileSync(join(target, damagedInStaging)).equals(RESUMABLE[damagedInStaging])).toBe(
        true,
      );
      expect(second.copied.files).toBe(13 - recorded.length + 2);
    });

    it.each([
      ['on the copy threads', {}],
      ['on the main thread (as on S3)', { copyPool: undefined }],
    ])(
      'records files whose modification time is ahead of the clock (a submitter’s, kept by rsync -t); the next attempt keeps them (%s)',
      async (_how, overrides: Partial<DatasetImportContext>) => {
        withDataset('AHEAD', { files: RESUMABLE });
        const payload = join(dropzone.datasetDir('AHEAD'), 'payload');
        const tomorrow = new Date(Date.now() + 24 * 3600_000);
        for (const path of Object.keys(RESUMABLE))
          utimesSync(join(payload, path), tomorrow, tomorrow);
        const { recorded } = await stoppedAttempt('AHEAD', overrides);
        expect(recorded.length).toBeGreaterThanOrEqual(3);

        const second = meter();
        const result = await runDatasetImport(
          context('AHEAD', { attempt: 2, copyMeter: second.copyMeter, ...overrides }),
        );
        expect(second.copied.files).toBe(13 - recorded.length);
        const provenance = JSON.parse(
          readFileSync(join(storage.absolute(result.path), '.provisioner/provenance.json'), 'utf8'),
        );
        expect(provenance.import.kept_from_earlier_attempts.files).toBe(recorded.length);
      },
    );

    it('does not record files changed less than 2 s before their copy (coarse file-system clocks)', async () => {
      withDataset('FRESH', { files: RESUMABLE });
      const { recorded } = await stoppedAttempt('FRESH', { recentChangeMs: undefined });
      expect(recorded).toEqual([]);
    });

    it('removes the staging when the import is rejected, or fails its last attempt', async () => {
      withDataset('LAST', { files: RESUMABLE });
      await stoppedAttempt('LAST');
      const wrong = Object.keys(RESUMABLE)
        .map((path) => `${'0'.repeat(64)}  ${path}\n`)
        .join('');
      writeFileSync(join(dropzone.datasetDir('LAST'), 'manifest-sha256.txt'), wrong);
      await expect(
        runDatasetImport(context('LAST', { attempt: 2, recentChangeMs: 0 })),
      ).rejects.toMatchObject({ code: 'checksum_mismatch' });
      expect(await storage.listStaging()).toEqual([]);

      withDataset('GONE', { files: RESUMABLE });
      await stoppedAttempt('GONE');
      rmSync(join(dropzone.datasetDir('GONE'), 'payload/small.txt'));
      writeFileSync(join(dropzone.datasetDir('GONE'), 'payload/small.txt'), 'other');
      const stop = new AbortController();
      stop.abort();
      // The last attempt fails (here: stopped before it copies, which is not a failure)...
      await expect(
        runDatasetImport(context('GONE', { attempt: 2, lastAttempt: true, signal: stop.signal })),
      ).rejects.toMatchObject({ name: 'ImportStoppedError' });
      expect(await storage.listStaging()).toHaveLength(1);
      // ...and a last attempt that fails for a fault removes what it staged.
      const error = await runDatasetImport(
        context('GONE', {
          attempt: 3,
          lastAttempt: true,
          ...afterEachChunk(() => {
            throw Object.assign(new Error('disk fault'), { code: 'EIO' });
          }),
        }),
      ).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'EIO' });
      expect(await storage.listStaging()).toEqual([]);
    });
  });
});

/** `plain` as a Crypt4GH file for `reader` (a depositor's `*.c4gh`). */
async function sealedFor(plain: Buffer, reader: Buffer): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of encrypt([plain], [reader])) parts.push(part);
  return Buffer.concat(parts);
}
