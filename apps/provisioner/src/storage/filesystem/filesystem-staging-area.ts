import { mkdirSync } from 'node:fs';
import { lstat, mkdir, open, readdir, rename, rmdir, unlink } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { mapLimit } from '../../common/map-limit';
import { formatJournal, JOURNAL_PATH, JournalLines } from '../staged-files-journal';
import { StagedFileTable } from '../staged-file-table';
import {
  contentPieces,
  type InheritedFiles,
  type ObjectContent,
  LocalFiles,
  ObjectWriter,
  StagedFile,
  StagingArea,
  StagingLostError,
} from '../storage-system';
import { fsyncPath, identityOf, isMissing, syncFilesystem, treeOf } from './file-tree';
import { READ_ONLY_FILE, stagingLostOnMissing, writeLocalObject } from './local-object';

/**
 * Bytes below this many are written by writeSmallObject on the calling thread (open, write,
 * close: tens of microseconds of kernel time on the page cache) rather than as three requests to
 * libuv's pool, each a hand-over to a pool thread and back. The S3 inbox's small objects come
 * this way, one a file (docs/decisions/s3-inbox-small-objects-written-at-once.md): on 2 cores the
 * hand-overs cost more CPU than the writes. Kept small, so a write the kernel makes wait (dirty
 * pages over their limit) holds the event loop for little; larger contents stay on the pool.
 */
const WRITE_NOW_BELOW = 64 * 1024;

/** Segments of anything but `/`, none empty, `.` or `..`: joined to a root it stays below it. */
const PLAIN_RELATIVE_PATH = /^(?!\.\.?(?:\/|$))[^/]+(?:\/(?!\.\.?(?:\/|$))[^/]+)*$/;

class FilesystemObjectWriter implements ObjectWriter {
  constructor(private readonly handle: import('node:fs/promises').FileHandle) {}

  async write(chunk: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      const { bytesWritten } = await this.handle.write(chunk, offset, chunk.length - offset);
      offset += bytesWritten;
    }
  }

  async writev(chunks: readonly Uint8Array[]): Promise<void> {
    let total = 0;
    for (const chunk of chunks) total += chunk.length;
    const { bytesWritten } = await this.handle.writev(chunks as Uint8Array[]);
    if (bytesWritten === total) return;
    // A short write: the rest one chunk at a time, from where it stopped.
    let skip = bytesWritten;
    for (const chunk of chunks) {
      if (skip >= chunk.length) {
        skip -= chunk.length;
        continue;
      }
      await this.write(chunk.subarray(skip));
      skip = 0;
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
 * The staged files an adopted area's journal names that are still there as recorded: a regular
 * file of the recorded size (staged files are created read-only and written once, so their
 * content is what was hashed when they were recorded).
 */
export async function verifiedJournal(root: string): Promise<InheritedFiles> {
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

/**
 * One attempt's staging: a directory of <root>/.staging/ on the storage's filesystem, published
 * by one rename (FilesystemStorage.publish).
 */
export class FilesystemStagingArea implements StagingArea {
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
    const handOut = (): string => {
      // Whoever is given the root (a validator) may make directories the area does not know.
      this.rootHandedOut = true;
      return root;
    };
    this.localFiles = {
      prepare: (path) => this.prepareLocalObject(path),
      directWriteMinBytes,
      get root() {
        return handOut();
      },
    };
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
   * The files' bytes are flushed first (one syncfs; without it, every object `objectsOf` names),
   * then their entries are appended to the journal and flushed: an entry never names bytes a
   * crash could lose. The journal is opened by path each time, so an attempt whose area was
   * adopted by another (renamed away) can no longer add to it.
   */
  async record(
    files: readonly StagedFile[],
    objectsOf: (file: StagedFile) => readonly string[] = (file) => [file.path],
  ): Promise<void> {
    if (files.length === 0) return;
    await this.flush(() =>
      files.flatMap((file) => objectsOf(file).map((path) => this.resolve(path))),
    );
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
    if (content instanceof Uint8Array && content.length < WRITE_NOW_BELOW) {
      writeLocalObject(this.prepareLocalObject(relativePath), this.id, content);
      return;
    }
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

  /** One flush ahead at a time (see StagingArea.flushAhead). */
  private flushingAhead = false;

  flushAhead(): void {
    if (this.flushingAhead) return;
    this.flushingAhead = true;
    void syncFilesystem(this.root)
      .catch(() => false)
      .finally(() => (this.flushingAhead = false));
  }

  /** Without `sync -f`, every file of the area's tree: the area keeps no list of them. */
  async sync(): Promise<void> {
    await this.flush(async () =>
      (await treeOf(this.root)).files.map((path) => join(this.root, path)),
    );
  }

  /** Set once localFiles.root was read: others may have made directories in the area since. */
  private rootHandedOut = false;

  /**
   * Every directory below the area's root, where this attempt made them all (a fresh area whose
   * root was never handed out: each one made through mkdirs or mkdirsSync); null otherwise (an
   * adopted area, whose earlier attempts made some; a validator given the root).
   */
  madeDirectories(): string[] | null {
    if (this.adopted || this.rootHandedOut) return null;
    return [...this.directories].filter((dir) => dir !== this.root);
  }

  /** Writing into a removed area re-creates directories (mkdir -p): never ours any more. */
  private async checkIdentity(): Promise<void> {
    const now = await lstat(this.root).catch(() => null);
    if (!now || identityOf(now) !== this.identity) throw new StagingLostError(this.id);
  }

  /**
   * The whole area durable (syncfs); without `sync -f`, the files `files` lists and the
   * directories one by one (listed only then: a record's list costs a string a file).
   */
  private async flush(files: () => string[] | Promise<string[]>): Promise<void> {
    // Checked right before publishing, so a half-empty tree is never published.
    await this.checkIdentity();
    if (await syncFilesystem(this.root)) return;
    await mapLimit(await files(), 16, fsyncPath);
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
