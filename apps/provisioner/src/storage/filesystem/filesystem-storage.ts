import { execFile } from 'node:child_process';
import { chmodSync, constants, mkdirSync, opendirSync, Stats } from 'node:fs';
import {
  chmod,
  lstat,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  rmdir,
  statfs,
  unlink,
} from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { TimeSlice } from '@app/platform';
import { mapLimit } from '../../common/map-limit';
import { formatJournal, JOURNAL_PATH, JournalLines } from '../staged-files-journal';
import { StagedFileTable } from '../staged-file-table';
import {
  ByteRange,
  ByteSource,
  contentPieces,
  type InheritedFiles,
  type ObjectContent,
  LocalFiles,
  ObjectWriter,
  OpenStagingOptions,
  StagedFile,
  StagingArea,
  StagingLostError,
  StorageSystem,
  TargetExistsError,
} from '../storage-system';
import { READ_ONLY_FILE, stagingLostOnMissing } from './local-object';

const STAGING_DIR = '.staging';
/** Segments of anything but `/`, none empty, `.` or `..`: joined to a root it stays below it. */
const PLAIN_RELATIVE_PATH = /^(?!\.\.?(?:\/|$))[^/]+(?:\/(?!\.\.?(?:\/|$))[^/]+)*$/;
const READ_ONLY_DIR = 0o555;

async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Inode numbers are reused at once; with the birth time (0 where unsupported) they are not. */
function identityOf(stats: Stats): string {
  return `${stats.ino}:${stats.birthtimeMs}`;
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * Gives every directory below `dir` (not `dir` itself) the mode `dirMode` (files keep theirs:
 * staged objects are created read-only). In blocking calls, in slices of the event loop's time:
 * here a call through libuv's pool cost ~10x the call itself (10,000 files in 320 directories:
 * 130 ms against 14, a million files ~2 s of every import's publish). opendir reads a
 * directory's entries a batch at a time, so a directory of a million entries is never held whole.
 */
async function chmodTree(dir: string, dirMode: number): Promise<void> {
  const pending = [dir];
  const slice = new TimeSlice();
  while (pending.length > 0) {
    const parent = pending.pop()!;
    const listing = opendirSync(parent, { bufferSize: DIRECTORY_ENTRIES_PER_READ });
    try {
      for (let entry = listing.readSync(); entry !== null; entry = listing.readSync()) {
        if (entry.isDirectory()) {
          const path = join(parent, entry.name);
          chmodSync(path, dirMode);
          pending.push(path);
        }
        if (slice.spent) await slice.next();
      }
    } finally {
      listing.closeSync();
    }
  }
}

/** Entries opendir reads per system call (its default is 32). */
const DIRECTORY_ENTRIES_PER_READ = 256;

class FilesystemObjectWriter implements ObjectWriter {
  constructor(private readonly handle: import('node:fs/promises').FileHandle) {}

  async write(chunk: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      const { bytesWritten } = await this.handle.write(chunk, offset, chunk.length - offset);
      offset += bytesWritten;
    }
  }

  async commit(): Promise<void> {
    await this.handle.close();
  }

  async abort(): Promise<void> {
    await this.handle.close();
  }
}

/**
 * syncfs(2) through coreutils' `sync -f`: one call flushes everything written to the
 * filesystem, which is what makes thousands of small files as fast as `cp -r` + `sync`.
 * Resolves false when the tool is missing, so the caller falls back to fsync per file.
 */
function syncFilesystem(path: string): Promise<boolean> {
  return new Promise((resolvePromise) => {
    execFile('sync', ['-f', path], (error) => resolvePromise(error === null));
  });
}

/**
 * The staged files an adopted area's journal names that are still there as recorded: a regular
 * file of the recorded size (staged files are created read-only and written once, so their
 * content is what was hashed when they were recorded).
 */
async function verifiedJournal(root: string): Promise<InheritedFiles> {
  const table = new StagedFileTable();
  const handle = await open(join(root, JOURNAL_PATH), 'r').catch((error: unknown) => {
    if (isMissing(error)) return null;
    throw error;
  });
  if (handle === null) return [];
  try {
    const lines = new JournalLines((entry) => table.set(entry));
    const chunk = Buffer.allocUnsafe(JOURNAL_CHUNK_BYTES);
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      lines.push(chunk.subarray(0, bytesRead));
    }
    lines.end();
  } finally {
    await handle.close();
  }
  const rows = Array.from({ length: table.count }, (_, i) => i);
  const present = await mapLimit(rows, 16, async (i) => {
    const stats = await lstat(join(root, table.path(i))).catch(() => null);
    return stats !== null && stats.isFile() && stats.size === table.at(i).size;
  });
  return table.rows(Uint32Array.from(rows.filter((i) => present[i])));
}

/** A journal is read back in pieces of this size. */
const JOURNAL_CHUNK_BYTES = 1024 * 1024;
/** Entries written back at once when an area's journal is rewritten. */
const JOURNAL_BATCH = 10_000;

/** Every file below `dir` (relative paths), and the directories, deepest first. */
async function treeOf(dir: string): Promise<{ files: string[]; directories: string[] }> {
  const files: string[] = [];
  const directories: string[] = [];
  const walk = async (relativeDir: string): Promise<void> => {
    for (const entry of await readdir(join(dir, relativeDir), { withFileTypes: true })) {
      const path = relativeDir ? `${relativeDir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        await walk(path);
        directories.push(path);
      } else files.push(path);
    }
  };
  await walk('');
  return { files, directories };
}

class FilesystemStagingArea implements StagingArea {
  readonly localFiles: LocalFiles;
  /** Without copy threads: lanes of three 2 MiB buffers each (36 MiB in all). */
  readonly copyLanes = 6;
  readonly copyBufferBytes = 2 * 1024 * 1024;
  private readonly directories = new Set<string>();

  constructor(
    readonly id: string,
    private readonly root: string,
    /** The area's inode and birth time when created: a re-created area is not ours any more. */
    private readonly identity: string,
    directWriteMinBytes: number | undefined,
    readonly inherited: InheritedFiles,
    /** Whether the area was adopted from an earlier attempt (else it is empty). */
    private readonly adopted: boolean,
  ) {
    this.directories.add(root);
    this.localFiles = { prepare: (path) => this.prepareLocalObject(path), directWriteMinBytes };
  }

  /**
   * The journal is rewritten first, naming only what is kept, then the rest is removed: a crash
   * in between leaves no entry naming a removed file. Directories left empty go too, so none
   * that the manifest no longer names is published.
   */
  async discardExcept(keep: (path: string) => boolean): Promise<void> {
    if (!this.adopted) return;
    await this.checkIdentity();
    await this.mkdirs(join(this.root, dirname(JOURNAL_PATH)));
    const journal = join(this.root, JOURNAL_PATH);
    const handle = await open(`${journal}.new`, 'w');
    try {
      let batch: StagedFile[] = [];
      for (let k = 0; k < this.inherited.length; k++) {
        const file = this.inherited.at(k)!;
        if (keep(file.path)) batch.push(file);
        if (batch.length === JOURNAL_BATCH || (k === this.inherited.length - 1 && batch.length)) {
          await handle.write(formatJournal(batch));
          batch = [];
        }
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(`${journal}.new`, journal);
    await this.removeExcept('', (path) => path === JOURNAL_PATH || keep(path));
  }

  /**
   * Removes the files below `relativeDir` that `keep` refuses, one directory at a time, and
   * each directory left empty (the deepest first).
   */
  private async removeExcept(relativeDir: string, keep: (path: string) => boolean): Promise<void> {
    const doomed: string[] = [];
    for (const entry of await readdir(join(this.root, relativeDir), { withFileTypes: true })) {
      const path = relativeDir ? `${relativeDir}/${entry.name}` : entry.name;
      if (!entry.isDirectory()) {
        if (!keep(path)) doomed.push(path);
        continue;
      }
      await this.removeExcept(path, keep);
      try {
        await rmdir(join(this.root, path));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOTEMPTY') continue;
        throw error;
      }
      this.directories.delete(join(this.root, path));
    }
    await mapLimit(doomed, 16, (path) => unlink(join(this.root, path)));
  }

  /**
   * The files' bytes are flushed first (one syncfs), then their entries are appended to the
   * journal and flushed: an entry never names bytes a crash could lose. The journal is opened by
   * path each time, so an attempt whose area was adopted by another (renamed away) can no
   * longer add to it.
   */
  async record(files: readonly StagedFile[]): Promise<void> {
    if (files.length === 0) return;
    await this.flush(files.map((file) => this.resolve(file.path)));
    await this.mkdirs(join(this.root, dirname(JOURNAL_PATH)));
    const handle = await open(join(this.root, JOURNAL_PATH), 'a').catch((error: unknown) => {
      throw stagingLostOnMissing(this.id, error);
    });
    try {
      await handle.appendFile(formatJournal(files));
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  async createObject(relativePath: string): Promise<ObjectWriter> {
    const path = this.resolve(relativePath);
    await this.mkdirs(dirname(path));
    // 'wx' and read-only, as openLocalObject (local-object.ts) explains.
    const handle = await open(path, 'wx', READ_ONLY_FILE).catch((error: unknown) => {
      throw stagingLostOnMissing(this.id, error);
    });
    return new FilesystemObjectWriter(handle);
  }

  /**
   * The object's parent directories are created here before the caller creates it (the fsync
   * fallback of sync() finds it in the area's tree).
   */
  private prepareLocalObject(relativePath: string): string {
    const path = this.resolve(relativePath);
    this.mkdirsSync(path.slice(0, path.lastIndexOf(sep)));
    return path;
  }

  async writeSmallObject(relativePath: string, content: ObjectContent): Promise<void> {
    const writer = await this.createObject(relativePath);
    try {
      for (const piece of contentPieces(content)) await writer.write(piece);
    } catch (error) {
      await writer.abort();
      throw error;
    }
    await writer.commit();
  }

  async createCollection(relativePath: string): Promise<void> {
    await this.mkdirs(this.resolve(relativePath));
  }

  /** Without `sync -f`, every file of the area's tree: the area keeps no list of them. */
  async sync(): Promise<void> {
    await this.flush(async () =>
      (await treeOf(this.root)).files.map((path) => join(this.root, path)),
    );
  }

  /** Writing into a removed area re-creates directories (mkdir -p): never ours any more. */
  private async checkIdentity(): Promise<void> {
    const now = await lstat(this.root).catch(() => null);
    if (!now || identityOf(now) !== this.identity) throw new StagingLostError(this.id);
  }

  /** The whole area durable (syncfs); without `sync -f`, `files` and the directories one by one. */
  private async flush(files: readonly string[] | (() => Promise<string[]>)): Promise<void> {
    // Checked right before publishing, so a half-empty tree is never published.
    await this.checkIdentity();
    if (await syncFilesystem(this.root)) return;
    await mapLimit(typeof files === 'function' ? await files() : files, 16, fsyncPath);
    for (const dir of this.directories) await fsyncPath(dir);
  }

  /**
   * One level at a time below the area's root, never the root itself: `mkdir -p` would
   * silently re-create an area removed underneath this attempt.
   */
  private async mkdirs(dir: string): Promise<void> {
    if (this.directories.has(dir)) return;
    await this.mkdirs(dirname(dir));
    try {
      await mkdir(dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw new StagingLostError(this.id);
      if (code !== 'EEXIST') throw error;
    }
    this.directories.add(dir);
  }

  /** mkdirs in blocking calls; the two share the set of directories known to exist. */
  private mkdirsSync(dir: string): void {
    if (this.directories.has(dir)) return;
    this.mkdirsSync(dirname(dir));
    try {
      mkdirSync(dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw new StagingLostError(this.id);
      if (code !== 'EEXIST') throw error;
    }
    this.directories.add(dir);
  }

  private resolve(relativePath: string): string {
    // A plain relative path (every import's: preflight refuses the others) is already the
    // normalised one; path.resolve cost ~3 µs of the main thread's time per file.
    if (PLAIN_RELATIVE_PATH.test(relativePath)) return `${this.root}${sep}${relativePath}`;
    const path = resolve(this.root, relativePath);
    if (!path.startsWith(this.root + sep))
      throw new Error(`staging path escapes its area: ${relativePath}`);
    return path;
  }
}

export interface FilesystemStorageOptions {
  /**
   * Objects of at least this many bytes are written past the page cache (O_DIRECT) where the
   * filesystem allows it; absent: every object goes through the page cache.
   */
  directWriteMinBytes?: number;
}

/**
 * Storage on a local or shared filesystem under STORAGE_ROOT. Staging lives in
 * <root>/.staging/<id>/ on the same filesystem, so publishing is one rename(2).
 * The only deletes this class can do are inside .staging/.
 */
export class FilesystemStorage implements StorageSystem {
  readonly description: string;
  private readonly stagingRoot: string;

  constructor(
    private readonly root: string,
    private readonly options: FilesystemStorageOptions = {},
  ) {
    this.root = resolve(root);
    this.stagingRoot = join(this.root, STAGING_DIR);
    this.description = `filesystem:${this.root}`;
  }

  /** The logical path itself: the catalog's platform setting names STORAGE_ROOT. */
  location(path: string): string {
    return path;
  }

  /** Absolute filesystem path of a logical path (for logs and tests). */
  absolute(path: string): string {
    const absolute = resolve(this.root, path);
    if (absolute !== this.root && !absolute.startsWith(this.root + sep))
      throw new Error(`path escapes the storage root: ${path}`);
    return absolute;
  }

  /** The file itself: the API serves it (drs/byte-ranges.ts). */
  byteSource(path: string): Promise<ByteSource> {
    return Promise.resolve({ kind: 'file', file: this.absolute(path) });
  }

  async exists(path: string): Promise<boolean> {
    try {
      await lstat(this.absolute(path));
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  async list(path: string): Promise<string[]> {
    try {
      return await readdir(this.absolute(path));
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
  }

  async readObject(path: string, range?: ByteRange): Promise<Buffer | null> {
    try {
      if (!range) return await readFile(this.absolute(path));
      const handle = await open(this.absolute(path), 'r');
      try {
        const buffer = Buffer.allocUnsafe(range.length);
        let filled = 0;
        for (;;) {
          const { bytesRead } = await handle.read(
            buffer,
            filled,
            range.length - filled,
            range.start + filled,
          );
          filled += bytesRead;
          if (bytesRead === 0 || filled === range.length) return buffer.subarray(0, filled);
        }
      } finally {
        await handle.close();
      }
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async ensureCollection(path: string): Promise<void> {
    await mkdir(this.absolute(path), { recursive: true });
  }

  /**
   * With `adopt`, the first earlier area that still exists is renamed to `id` (one rename, so
   * an attempt still writing into it by its old name fails instead of writing into this one);
   * the others are removed.
   */
  async openStaging(
    id: string,
    _target?: string,
    options: OpenStagingOptions = {},
  ): Promise<StagingArea> {
    await this.removeStaging(id);
    const dir = this.stagingPath(id);
    let adopted = false;
    for (const earlier of options.adopt ?? []) {
      if (!adopted && earlier !== id) adopted = await this.adopt(earlier, dir);
      else await this.removeStaging(earlier);
    }
    if (!adopted) await mkdir(dir, { recursive: true });
    const inherited = adopted ? await verifiedJournal(dir) : [];
    return new FilesystemStagingArea(
      id,
      dir,
      identityOf(await lstat(dir)),
      this.options.directWriteMinBytes,
      inherited,
      adopted,
    );
  }

  /** Renames an earlier area to `dir`; false when it is gone or not an area. */
  private async adopt(earlier: string, dir: string): Promise<boolean> {
    const from = this.stagingPath(earlier);
    const stats = await lstat(from).catch(() => null);
    if (!stats?.isDirectory()) {
      if (stats) await this.removeStaging(earlier);
      return false;
    }
    try {
      await rename(from, dir);
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
    // An attempt killed while publishing left its directories read-only.
    await chmod(dir, 0o755);
    await chmodTree(dir, 0o755);
    return true;
  }

  async removeStaging(id: string): Promise<void> {
    const dir = this.stagingPath(id);
    try {
      // An attempt killed after locking its tree leaves read-only directories behind.
      if ((await lstat(dir)).isDirectory()) {
        await chmod(dir, 0o755);
        await chmodTree(dir, 0o755);
      }
    } catch (error) {
      if (isMissing(error)) return;
      throw error;
    }
    await rm(dir, { recursive: true, force: true });
  }

  async listStaging(): Promise<string[]> {
    try {
      return await readdir(this.stagingRoot);
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
  }

  async publish(stagingId: string, path: string, options: { readOnly: boolean }): Promise<void> {
    const source = this.stagingPath(stagingId);
    const target = this.absolute(path);
    await mkdir(dirname(target), { recursive: true });
    // The journal of what was staged is the area's, not the dataset's (nor is its directory,
    // when nothing else is in it).
    await rm(join(source, JOURNAL_PATH), { force: true });
    await rmdir(join(source, dirname(JOURNAL_PATH))).catch(() => undefined);
    // Staged objects are created read-only already; only directories need locking.
    if (options.readOnly) await chmodTree(source, READ_ONLY_DIR);
    // rename(2) replaces an empty directory silently and Node has no RENAME_NOREPLACE:
    // checking first is the guard; the job id makes a concurrent publisher of the same path impossible.
    if (await this.exists(path)) throw new TargetExistsError(path);
    try {
      await rename(source, target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST') throw new TargetExistsError(path);
      throw error;
    }
    if (options.readOnly) await chmod(target, READ_ONLY_DIR);
    await fsyncPath(dirname(target));
  }

  async freeBytes(): Promise<number> {
    await mkdir(this.root, { recursive: true });
    const stats = await statfs(this.root);
    return stats.bavail * stats.bsize;
  }

  private stagingPath(id: string): string {
    const dir = resolve(this.stagingRoot, id);
    if (
      relative(this.stagingRoot, dir).includes(sep) ||
      dirname(dir) !== this.stagingRoot ||
      id === '' ||
      id === '.' ||
      id === '..'
    ) {
      throw new Error(`not a staging id: ${id}`);
    }
    return dir;
  }
}
