import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from '../../../test/support/dropzone-fixture';
import { loadProvisionerSettings } from '../../config/provisioner.settings';
import { TargetExistsError } from '../storage-system';
import { storageFromSettings } from '../storage.module';
import { FilesystemStorage } from './filesystem-storage';
import { openLocalObject } from './local-object';
import { WRITE_PROBE, type WritePathMeasurement, WritePathChoice } from './write-path-probe';

/** A measurement of one byte, each way once, as the specs below have the probe answer. */
const measured1: WritePathMeasurement = {
  direct: true,
  bytes: 1,
  directMs: 1,
  cachedMs: 1,
  directRuns: [1],
  cachedRuns: [1],
};

/** The module the probe calls into (its namespace import is not spied on). */
const fsPromises = jest.requireActual<typeof FsPromises>('node:fs/promises');

describe('FilesystemStorage', () => {
  let root: string;
  let storage: FilesystemStorage;
  beforeEach(() => {
    root = join(tempDir('storage'), 'root');
    storage = new FilesystemStorage(root);
  });

  async function stage(id: string): Promise<void> {
    const area = await storage.openStaging(id);
    await area.writeSmallObject('sub/file.txt', 'hello');
    await area.writeSmallObject('top.txt', 'top');
    await area.sync();
  }

  it('has staging areas write objects of 1 MiB or more direct with IMPORT_DIRECT_WRITES true, never with false', async () => {
    const settings = (env: Record<string, string>) =>
      loadProvisionerSettings({ REDIS_URL: 'redis://redis:6379', STORAGE_ROOT: root, ...env });
    const on = await storageFromSettings(settings({ IMPORT_DIRECT_WRITES: 'true' })).openStaging(
      'direct-on',
    );
    expect(on.localFiles?.directWriteMinBytes).toBe(1024 * 1024);
    const off = await storageFromSettings(settings({ IMPORT_DIRECT_WRITES: 'false' })).openStaging(
      'direct-off',
    );
    expect(off.localFiles?.directWriteMinBytes).toBeUndefined();
  });

  it('with IMPORT_DIRECT_WRITES auto (the default), measures the disk at the first area only, in unnamed files', async () => {
    const settings = loadProvisionerSettings({ REDIS_URL: 'redis://redis:6379', STORAGE_ROOT: root });
    const auto = storageFromSettings(settings);
    const open = jest.spyOn(fsPromises, 'open');
    let first: number | undefined;
    try {
      first = (await auto.openStaging('first')).localFiles?.directWriteMinBytes;
      // The probe's files (one per copy thread at once), each way in each round, in the staging root.
      const files = 2 * WRITE_PROBE.rounds * Math.max(1, settings.copyThreads);
      expect(open.mock.calls.map(([path]) => path)).toEqual(
        Array(files).fill(join(root, '.staging')),
      );
      open.mockClear();
      const second = await auto.openStaging('second');
      // Measured once: the next area takes the same choice without writing again.
      expect(open).not.toHaveBeenCalled();
      expect(second.localFiles?.directWriteMinBytes).toBe(first);
    } finally {
      open.mockRestore();
    }
    expect([1024 * 1024, undefined]).toContain(first);
    expect(readdirSync(join(root, '.staging')).sort()).toEqual(['first', 'second']);
  });

  it('under auto, measures the disk when the worker prepares it, so that the first area waits for no probe', async () => {
    let measured = 0;
    let answer: (() => void) | undefined;
    const writePath = new WritePathChoice(
      () => undefined,
      () => undefined,
      () => {
        measured++;
        return new Promise((resolve) => {
          answer = () => resolve({ ...measured1, direct: false, directMs: 2 });
        });
      },
    );
    const prepared = new FilesystemStorage(root, { directWriteMinBytes: 1024 * 1024, writePath });
    const preparing = prepared.prepareImports();
    // Started at once, before any area is opened.
    expect(measured).toBe(1);
    // An area opened while the probe runs takes its answer, without a second probe.
    const opening = prepared.openStaging('during');
    answer!();
    await preparing;
    expect((await opening).localFiles?.directWriteMinBytes).toBeUndefined();
    const after = await prepared.openStaging('after');
    expect(after.localFiles?.directWriteMinBytes).toBeUndefined();
    expect(measured).toBe(1);
    // Without auto there is nothing to measure.
    await expect(new FilesystemStorage(join(root, 'plain')).prepareImports()).resolves.toBe(
      undefined,
    );
  });

  it('follows the measured choice under auto: direct where the disk takes it as fast, through the cache where not', async () => {
    for (const direct of [true, false]) {
      const writePath = new WritePathChoice(
        () => undefined,
        () => undefined,
        () => Promise.resolve({ ...measured1, direct }),
      );
      const measured = new FilesystemStorage(join(root, String(direct)), {
        directWriteMinBytes: 1024 * 1024,
        writePath,
      });
      const area = await measured.openStaging('a');
      expect(area.localFiles?.directWriteMinBytes).toBe(direct ? 1024 * 1024 : undefined);
    }
  });

  it('publishes a staging area with one rename and locks the tree read-only', async () => {
    await stage('imp');
    await storage.publish('imp', 'projects/P/S/data/raw/D1', { readOnly: true });
    const target = join(root, 'projects/P/S/data/raw/D1');
    expect(statSync(join(target, 'sub/file.txt')).mode & 0o777).toBe(0o444);
    expect(statSync(join(target, 'sub')).mode & 0o777).toBe(0o555);
    expect(statSync(target).mode & 0o777).toBe(0o555);
    expect(await storage.listStaging()).toEqual([]);
    expect(await storage.list('projects/P/S/data/raw')).toEqual(['D1']);
  });

  it('locks every directory read-only, in a directory of more entries than one read and deep down', async () => {
    const area = await storage.openStaging('wide');
    const wide = Array.from({ length: 600 }, (_, i) => `wide/d${i}`);
    const deep = Array.from({ length: 40 }, (_, i) => 'x'.repeat(i + 1)).join('/');
    for (const dir of [...wide, deep]) await area.writeSmallObject(`${dir}/f`, 'a');
    await area.sync();
    await storage.publish('wide', 'projects/P/S/data/raw/W', { readOnly: true });
    const target = join(root, 'projects/P/S/data/raw/W');
    const modes = new Set(
      [...wide, deep, 'wide', 'x', deep.slice(0, deep.lastIndexOf('/'))].map(
        (dir) => statSync(join(target, dir)).mode & 0o777,
      ),
    );
    expect([...modes]).toEqual([0o555]);
    expect(statSync(join(target, deep, 'f')).mode & 0o777).toBe(0o444);
  });

  it('locks a directory it did not make read-only too, once the area handed out its root (a validator)', async () => {
    const area = await storage.openStaging('exposed');
    await area.writeSmallObject('made/f', 'a');
    // A validator is given the area's root and may make directories there.
    mkdirSync(join(area.localFiles!.root!, 'by-validator/deep'), { recursive: true });
    await area.sync();
    await storage.publish('exposed', 'projects/P/S/data/raw/E', { readOnly: true });
    const target = join(root, 'projects/P/S/data/raw/E');
    for (const dir of ['made', 'by-validator', 'by-validator/deep'])
      expect(statSync(join(target, dir)).mode & 0o777).toBe(0o555);
  });

  it('never publishes over an existing path, even an empty directory, and keeps what is there', async () => {
    mkdirSync(join(root, 'projects/P/S/data/raw/D1'), { recursive: true });
    writeFileSync(join(root, 'projects/P/S/data/raw/D1/keep'), 'precious');
    await stage('a');
    await expect(
      storage.publish('a', 'projects/P/S/data/raw/D1', { readOnly: true }),
    ).rejects.toBeInstanceOf(TargetExistsError);
    mkdirSync(join(root, 'projects/P/S/data/raw/EMPTY'));
    await stage('b');
    await expect(
      storage.publish('b', 'projects/P/S/data/raw/EMPTY', { readOnly: false }),
    ).rejects.toBeInstanceOf(TargetExistsError);
    expect(existsSync(join(root, 'projects/P/S/data/raw/D1/keep'))).toBe(true);
  });

  it('wipes an earlier attempt when a staging area is reopened, read-only leftovers included', async () => {
    await stage('imp');
    chmodSync(join(root, '.staging/imp/sub'), 0o555);
    const area = await storage.openStaging('imp');
    await area.writeSmallObject('sub/file.txt', 'again');
    expect(await storage.list('.staging/imp/sub')).toEqual(['file.txt']);
    await storage.removeStaging('imp');
    expect(await storage.listStaging()).toEqual([]);
  });

  it('adopts an earlier area by one rename: inherits what it recorded and still holds, and the earlier attempt can no longer record', async () => {
    const staged = (path: string, content: string) => ({
      path,
      size: content.length,
      sha256: 'a'.repeat(64),
      md5: null,
      source: { ino: 7, size: content.length, mtimeMs: 1, ctimeMs: 2 },
    });
    const first = await storage.openStaging('imp~data~a1-w-1');
    await first.writeSmallObject('keep/one.txt', 'one');
    await first.writeSmallObject('two.txt', 'two');
    await first.writeSmallObject('gone.txt', 'gone');
    await first.writeSmallObject('old/half.bin', 'half');
    await first.record([staged('keep/one.txt', 'one'), staged('two.txt', 'two')]);
    await first.record([staged('gone.txt', 'gone')]);
    rmSync(join(root, '.staging/imp~data~a1-w-1/gone.txt'));
    // An attempt killed while publishing left its directories read-only.
    chmodSync(join(root, '.staging/imp~data~a1-w-1/keep'), 0o555);
    await storage.openStaging('imp~data~a0-w-0');

    const second = await storage.openStaging('imp~data~a2-w-2', undefined, {
      adopt: ['imp~data~a1-w-1', 'imp~data~a0-w-0'],
    });
    expect(await storage.listStaging()).toEqual(['imp~data~a2-w-2']);
    expect(
      Array.from({ length: second.inherited.length }, (_, i) => second.inherited.at(i)),
    ).toEqual([staged('keep/one.txt', 'one'), staged('two.txt', 'two')]);
    await expect(first.record([staged('two.txt', 'two')])).rejects.toMatchObject({
      code: 'staging_lost',
    });

    await second.discardExcept((path) => path === 'keep/one.txt');
    const area = join(root, '.staging/imp~data~a2-w-2');
    expect(existsSync(join(area, 'two.txt'))).toBe(false);
    expect(existsSync(join(area, 'old'))).toBe(false);
    expect(readFileSync(join(area, '.provisioner/staged-files.jsonl'), 'utf8')).toBe(
      `${JSON.stringify(staged('keep/one.txt', 'one'))}\n`,
    );
    await second.writeSmallObject('two.txt', 'TWO');
    await second.writeSmallObject('keep/three.txt', 'three');
    await second.sync();
    await storage.publish('imp~data~a2-w-2', 'projects/P/S/data/raw/D2', { readOnly: true });
    const target = join(root, 'projects/P/S/data/raw/D2');
    expect(readFileSync(join(target, 'keep/one.txt'), 'utf8')).toBe('one');
    expect(existsSync(join(target, '.provisioner'))).toBe(false);
    expect(statSync(join(target, 'keep')).mode & 0o777).toBe(0o555);
  });

  it('writes an object from chunks in order: write and writev, one after the other', async () => {
    const area = await storage.openStaging('vectored');
    const writer = await area.createObject('large/reads.bam');
    await writer.write(Buffer.from('head-'));
    await writer.writev!([Buffer.from('one-'), new Uint8Array(0), Buffer.from('two-')]);
    await writer.write(Buffer.from('tail'));
    await writer.commit();
    expect(readFileSync(join(root, '.staging/vectored/large/reads.bam'), 'utf8')).toBe(
      'head-one-two-tail',
    );
  });

  it('refuses staging ids and paths that escape their area', async () => {
    await expect(storage.openStaging('../x')).rejects.toThrow('not a staging id');
    await expect(storage.removeStaging('a/b')).rejects.toThrow('not a staging id');
    expect(() => storage.absolute('../outside')).toThrow('escapes');
    const area = await storage.openStaging('ok');
    await expect(area.createObject('../../escape')).rejects.toThrow('escapes');
  });

  it('prepares a local object for another thread to create: parents made, exclusive, read-only', async () => {
    const area = await storage.openStaging('local');
    const path = area.localFiles!.prepare('a/b/c.txt');
    expect(path).toBe(join(root, '.staging/local/a/b/c.txt'));
    expect(statSync(join(root, '.staging/local/a/b')).isDirectory()).toBe(true);
    expect(existsSync(path)).toBe(false);
    const writer = openLocalObject(path, 'local');
    writer.write(Buffer.from('made elsewhere'));
    writer.commit();
    expect(readFileSync(path, 'utf8')).toBe('made elsewhere');
    expect(statSync(path).mode & 0o777).toBe(0o444);
    expect(() => openLocalObject(path, 'local')).toThrow(
      expect.objectContaining({ code: 'EEXIST' }),
    );
    expect(() => area.localFiles!.prepare('../../escape')).toThrow('escapes');
    await expect(area.sync()).resolves.toBeUndefined();
  });

  it('never re-creates a removed area for a local object: staging_lost, before or after prepare', async () => {
    const area = await storage.openStaging('gone');
    const prepared = area.localFiles!.prepare('x/y.txt');
    rmSync(join(root, '.staging/gone'), { recursive: true });
    expect(() => openLocalObject(prepared, 'gone')).toThrow(
      expect.objectContaining({ code: 'staging_lost', id: 'gone' }),
    );
    expect(() => area.localFiles!.prepare('z/w.txt')).toThrow(
      expect.objectContaining({ code: 'staging_lost' }),
    );
    expect(await storage.listStaging()).toEqual([]);
  });

  it('writes a small object of bytes at once, as the pool path does: read-only, once, never into a removed area', async () => {
    const area = await storage.openStaging('now');
    const bytes = Buffer.from('4 KiB of an inbox object');
    const large = Buffer.alloc(64 * 1024, 7);
    await area.writeSmallObject('deep/er/small.bin', bytes);
    await area.writeSmallObject('deep/large.bin', large);
    for (const [path, content] of [
      ['deep/er/small.bin', bytes],
      ['deep/large.bin', large],
    ] as const) {
      const file = join(root, '.staging/now', path);
      expect(readFileSync(file).equals(content)).toBe(true);
      expect(statSync(file).mode & 0o777).toBe(0o444);
    }
    // Written once: a second write of the same object is refused, whichever path either took.
    await expect(area.writeSmallObject('deep/er/small.bin', bytes)).rejects.toMatchObject({
      code: 'EEXIST',
    });
    await expect(area.writeSmallObject('deep/large.bin', bytes)).rejects.toMatchObject({
      code: 'EEXIST',
    });
    rmSync(join(root, '.staging/now'), { recursive: true });
    await expect(area.writeSmallObject('other/small.bin', bytes)).rejects.toMatchObject({
      code: 'staging_lost',
      id: 'now',
    });
    await expect(area.writeSmallObject('deep/er/again.bin', bytes)).rejects.toMatchObject({
      code: 'staging_lost',
    });
    expect(await storage.listStaging()).toEqual([]);
  });

  it('reports free space and reads objects, whole or a range of them', async () => {
    expect(await storage.freeBytes()).toBeGreaterThan(0);
    expect(await storage.readObject('nothing')).toBeNull();
    expect(await storage.readObject('nothing', { start: 0, length: 4 })).toBeNull();
    expect(await storage.exists('nothing')).toBe(false);
    mkdirSync(join(root, 'c'), { recursive: true });
    writeFileSync(join(root, 'c/object.txt'), '0123456789');
    expect((await storage.readObject('c/object.txt'))!.toString()).toBe('0123456789');
    const range = (start: number, length: number) =>
      storage.readObject('c/object.txt', { start, length }).then((b) => b!.toString());
    expect(await range(0, 4)).toBe('0123');
    expect(await range(8, 4)).toBe('89');
    expect(await range(10, 4)).toBe('');
    expect(await range(20, 4)).toBe('');
  });
});
