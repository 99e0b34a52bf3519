import {
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import {
  digest,
  makeSpecialFile,
  tempDir,
  writeDatasetDirectory,
} from '../../../test/support/dropzone-fixture';
import {
  DatasetReading,
  DirectoryInspection,
  PayloadCheck,
} from './dataset-directory';
import { ScanCache } from './scan-cache';
import { SourceScanner } from './source-scanner';
import { REAL_IO_MS } from '../../../../../test/support/timeouts';
import { DEFAULT_SOURCE_LIMITS } from '../../config/source-config';

// Real threads, files or sockets: seconds on a loaded 2-core machine.
jest.setTimeout(REAL_IO_MS);

const FILES = { 'top.txt': 'top', 'sub/deep.txt': 'deep' };

/** Every entry's mtime a minute back: old enough for the cache to trust it. */
function backdate(path: string): void {
  const old = new Date(Date.now() - 60_000);
  if (statSync(path).isDirectory())
    for (const name of readdirSync(path)) backdate(join(path, name));
  utimesSync(path, old, old);
}

function deliveredDataset(settled = true): string {
  const dir = join(tempDir('scan-cache'), 'DS-1');
  writeDatasetDirectory(dir, { submission: 'SUB-1', files: FILES });
  if (settled) backdate(dir);
  return dir;
}

describe('ScanCache over the source-scan thread', () => {
  const scanner = new SourceScanner();
  const scan = (payload: PayloadCheck) => (items: { dir: string; known: string | null }[]) =>
    scanner.datasets(items, { document: 'none', payload, limits: DEFAULT_SOURCE_LIMITS });
  const newCache = (limits = { maxEntries: 1000, maxBytes: 1 << 20 }) =>
    new ScanCache<DatasetReading>(scan('sizes'), limits);
  const inspect = async (
    cache: ScanCache<DatasetReading>,
    dir: string,
  ): Promise<DirectoryInspection> => (await cache.readMany([dir]))[0].inspection;
  /** A fresh read, remembered for listings (what findDataset does). */
  const refresh = async (cache: ScanCache<DatasetReading>, dir: string) => {
    const [answer] = await scan('sizes')([{ dir, known: null }]);
    cache.remember(dir, answer!);
    return answer!.value.inspection;
  };

  afterAll(() => scanner.close());

  it('answers an unchanged dataset from its cache (a deep payload change alone is not seen)', async () => {
    const dir = deliveredDataset();
    const cache = newCache();
    expect(await inspect(cache, dir)).toMatchObject({ ready: true, fileCount: 2, byteSize: 7 });
    rmSync(join(dir, 'payload/sub/deep.txt'));
    // The documented limit: nothing watched changed, so the listing keeps its answer...
    expect(await inspect(cache, dir)).toMatchObject({ ready: true });
    // ...while a fresh reading (what imports use) sees the truth and updates the cache.
    expect(await refresh(cache, dir)).toMatchObject({ ready: false, reason: 'files_missing' });
    expect(await inspect(cache, dir)).toMatchObject({ ready: false, reason: 'files_missing' });
  });

  it('notices the marker removed, written, or swapped for a link', async () => {
    const dir = deliveredDataset();
    const cache = newCache();
    expect((await inspect(cache, dir)).ready).toBe(true);
    rmSync(join(dir, '.ready'));
    expect(await inspect(cache, dir)).toMatchObject({ ready: false, reason: 'marker_missing' });
    writeFileSync(join(dir, '.ready'), '');
    expect((await inspect(cache, dir)).ready).toBe(true);
    backdate(dir);
    expect((await inspect(cache, dir)).ready).toBe(true);
    rmSync(join(dir, '.ready'));
    symlinkSync('/etc/hostname', join(dir, '.ready'));
    expect(await inspect(cache, dir)).toMatchObject({
      ready: false,
      reason: 'metadata_refused',
      reasonDetail: '.ready is a symbolic link, not a regular file',
    });
  });

  it('notices a manifest rewritten in place and a top-level payload file removed', async () => {
    const dir = deliveredDataset();
    const cache = newCache();
    expect((await inspect(cache, dir)).ready).toBe(true);
    writeFileSync(join(dir, 'manifest-sha256.txt'), `${digest('sha256', 'x')}  gone.txt\n`);
    expect(await inspect(cache, dir)).toMatchObject({ ready: false, reason: 'files_missing' });
    writeFileSync(join(dir, 'manifest-sha256.txt'), `${digest('sha256', 'top')}  top.txt\n`);
    expect(await inspect(cache, dir)).toMatchObject({ ready: true, fileCount: 1 });
    rmSync(join(dir, 'payload/top.txt'));
    expect(await inspect(cache, dir)).toMatchObject({ ready: false, reason: 'files_missing' });
  });

  it('notices a manifest or dataset.json that was absent and is written now', async () => {
    const dir = deliveredDataset();
    const cache = newCache();
    expect((await inspect(cache, dir)).ready).toBe(true);
    // Only the directory's own signature changes (a new entry); the absent file is not lstat'ed.
    writeFileSync(join(dir, 'manifest-md5.txt'), `${digest('md5', 'x')}  other.txt\n`);
    expect(await inspect(cache, dir)).toMatchObject({ ready: false, reason: 'manifest_invalid' });
  });

  it('notices the dataset directory swapped for a link to another dataset', async () => {
    const dir = deliveredDataset();
    const other = deliveredDataset();
    const cache = newCache();
    expect((await inspect(cache, dir)).ready).toBe(true);
    renameSync(dir, `${dir}.old`);
    symlinkSync(other, dir);
    expect(await inspect(cache, dir)).toMatchObject({
      ready: false,
      reason: 'metadata_refused',
      reasonDetail: 'the directory is a symbolic link, not a directory',
    });
  });

  it('does not cache a dataset changed within the last two seconds (coarse timestamps)', async () => {
    const dir = deliveredDataset(false);
    const cache = newCache();
    expect((await inspect(cache, dir)).ready).toBe(true);
    expect(cache.size).toBe(0);
    rmSync(join(dir, 'payload/sub/deep.txt'));
    expect(await inspect(cache, dir)).toMatchObject({ ready: false, reason: 'files_missing' });
  });

  it('reports a dataset not delivered, and sees it once delivered', async () => {
    const base = tempDir('scan-cache');
    const cache = newCache();
    expect(await inspect(cache, join(base, 'DS-2'))).toMatchObject({ reason: 'not_delivered' });
    writeDatasetDirectory(join(base, 'DS-2'), { submission: 'SUB-1', files: FILES });
    expect((await inspect(cache, join(base, 'DS-2'))).ready).toBe(true);
  });

  it('keeps at most maxEntries entries and maxBytes of them, dropping the oldest', async () => {
    const dirs = [deliveredDataset(), deliveredDataset(), deliveredDataset()];
    const byEntries = newCache({ maxEntries: 2, maxBytes: 1 << 20 });
    expect((await byEntries.readMany(dirs)).map((r) => r.inspection.ready)).toEqual([
      true,
      true,
      true,
    ]);
    expect(byEntries.size).toBe(2);
    // 500 bytes of overhead per entry: room for two.
    const byBytes = newCache({ maxEntries: 1000, maxBytes: 1200 });
    await byBytes.readMany(dirs);
    expect(byBytes.size).toBe(2);
  });

  it('reports a path listed twice, and two manifests that list different paths', async () => {
    const dir = deliveredDataset(false);
    const line = (path: string, content: string) => `${digest('sha256', content)}  ${path}\n`;
    writeFileSync(
      join(dir, 'manifest-sha256.txt'),
      line('top.txt', 'top') + line('top.txt', 'top'),
    );
    expect(await inspect(newCache(), dir)).toMatchObject({
      reason: 'manifest_invalid',
      reasonDetail: 'manifest-sha256.txt line 2: path listed twice: top.txt',
    });
    writeFileSync(
      join(dir, 'manifest-sha256.txt'),
      line('top.txt', 'top') + line('sub/deep.txt', 'deep'),
    );
    const md5 = (path: string, content: string) => `${digest('md5', content)}  ${path}\n`;
    for (const text of [
      md5('top.txt', 'top'),
      md5('top.txt', 'top') + md5('top.txt', 'top'),
      md5('top.txt', 'top') + md5('other.txt', 'deep'),
    ]) {
      writeFileSync(join(dir, 'manifest-md5.txt'), text);
      expect(await inspect(newCache(), dir)).toMatchObject({ reason: 'manifest_invalid' });
    }
    writeFileSync(
      join(dir, 'manifest-md5.txt'),
      md5('sub/deep.txt', 'deep') + md5('top.txt', 'top'),
    );
    expect(await inspect(newCache(), dir)).toMatchObject({ ready: true, fileCount: 2 });
  });

  it('answers, never fails the batch, for a dataset that is a FIFO or unreadable, and paths through files or links', async () => {
    const base = tempDir('scan-cache');
    const fifo = join(base, 'DS-FIFO');
    makeSpecialFile(fifo, 'fifo');
    const dir = deliveredDataset(false);
    symlinkSync('/etc', join(dir, 'payload/etc-link'));
    writeFileSync(
      join(dir, 'manifest-sha256.txt'),
      [
        `${digest('sha256', 'top')}  top.txt`,
        `${digest('sha256', 'x')}  top.txt/under-a-file`,
        `${digest('sha256', 'x')}  etc-link/hostname`,
        `${digest('sha256', 'x')}  ${'d/'.repeat(1995)}f`,
      ].join('\n'),
    );
    const [forFifo, forDir] = await newCache().readMany([fifo, dir]);
    expect(forFifo.inspection).toMatchObject({
      reason: 'metadata_refused',
      reasonDetail: 'the directory is a FIFO (named pipe), not a directory',
    });
    // Looked up without following the link in the middle: /etc/hostname is not counted.
    expect(forDir.inspection).toMatchObject({
      reason: 'files_missing',
      byteSize: 3,
      reasonDetail: expect.stringContaining('3 manifest path(s) do not exist'),
    });
  });

  it('answers in input order across batches of the thread', async () => {
    const base = tempDir('scan-cache');
    const dirs = Array.from({ length: 1200 }, (_, i) => join(base, `absent-${i}`));
    dirs[700] = deliveredDataset();
    const readings = await newCache().readMany(dirs);
    expect(readings).toHaveLength(1200);
    expect(readings.filter((r) => r.inspection.ready).length).toBe(1);
    expect(readings[700].inspection.ready).toBe(true);
  });

  it('reads delivery only when asked: directory, marker and metadata, not the payload', async () => {
    const dir = deliveredDataset(false);
    rmSync(join(dir, 'payload/sub/deep.txt'));
    const [delivery] = await scan('none')([{ dir, known: null }]);
    expect(delivery!.value.inspection).toMatchObject({
      ready: true,
      reason: null,
      fileCount: null,
      byteSize: null,
    });
    expect(await refresh(newCache(), dir)).toMatchObject({ reason: 'files_missing' });
    rmSync(join(dir, '.ready'));
    const [unmarked] = await scan('none')([{ dir, known: null }]);
    expect(unmarked!.value.inspection).toMatchObject({ ready: false, reason: 'marker_missing' });
  });
});

describe('SourceScanner', () => {
  it('ends its thread once idle and starts another for the next request', async () => {
    const scanner = new SourceScanner(50);
    const dir = deliveredDataset();
    const read = async () =>
      (
        await scanner.datasets([{ dir, known: null }], {
          document: 'none',
          payload: 'sizes',
          limits: DEFAULT_SOURCE_LIMITS,
        })
      )[0]!.value.inspection;
    try {
      const first = await read();
      expect(scanner.threadRunning).toBe(true);
      const deadline = Date.now() + REAL_IO_MS / 2;
      while (scanner.threadRunning && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(scanner.threadRunning).toBe(false);
      expect(await read()).toEqual(first);
    } finally {
      await scanner.close();
    }
  });
});
