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
  stat,
  statfs,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { chmodSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { JOURNAL_PATH } from '../staged-files-journal';
import {
  ByteRange,
  ByteSource,
  OpenStagingOptions,
  StagingArea,
  StorageSystem,
  TargetExistsError,
} from '../storage-system';
import { chmodTree, fsyncPath, identityOf, isMissing } from './file-tree';
import { FilesystemStagingArea, verifiedJournal } from './filesystem-staging-area';
import type { WritePathChoice } from './write-path-probe';

const STAGING_DIR = '.staging';
const READ_ONLY_DIR = 0o555;

export interface FilesystemStorageOptions {
  /**
   * Objects of at least this many bytes are written past the page cache (O_DIRECT) where the
   * filesystem allows it; absent: every object goes through the page cache.
   */
  directWriteMinBytes?: number;
  /**
   * With directWriteMinBytes, whether this disk takes them faster past the cache, measured
   * (IMPORT_DIRECT_WRITES=auto); absent: always past it.
   */
  writePath?: WritePathChoice;
}

/**
 * Storage on a local or shared filesystem under STORAGE_ROOT. Staging lives in
 * <root>/.staging/<id>/ on the same filesystem, so publishing is one rename(2).
 * The only deletes this class can do are inside .staging/.
 */
export class FilesystemStorage implements StorageSystem {
  readonly description: string;
  private readonly stagingRoot: string;
  /** The areas this process opened and has not published or removed yet, by id. */
  private readonly openAreas = new Map<string, FilesystemStagingArea>();

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

  /**
   * A new file beside the object, synced, renamed over it (same mode), the directory synced. A
   * read-only directory (a published tree) is made writable for that moment and locked again.
   */
  async replaceObject(path: string, content: Uint8Array): Promise<void> {
    const file = this.absolute(path);
    const dir = dirname(file);
    const fileMode = (await stat(file)).mode & 0o777;
    const dirMode = (await stat(dir)).mode & 0o777;
    const temp = join(dir, `.replacing-${randomBytes(6).toString('hex')}`);
    if ((dirMode & 0o200) === 0) await chmod(dir, dirMode | 0o700);
    try {
      await writeFile(temp, content, { flag: 'wx', mode: 0o600 });
      await fsyncPath(temp);
      await chmod(temp, fileMode);
      await rename(temp, file);
      await fsyncPath(dir);
    } finally {
      await unlink(temp).catch(() => undefined);
      if ((dirMode & 0o200) === 0) await chmod(dir, dirMode);
    }
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
      this.openAreas.delete(earlier);
      if (!adopted && earlier !== id) adopted = await this.adopt(earlier, dir);
      else await this.removeStaging(earlier);
    }
    if (!adopted) await mkdir(dir, { recursive: true });
    const inherited = adopted ? await verifiedJournal(dir) : [];
    const area = new FilesystemStagingArea(
      id,
      dir,
      identityOf(await lstat(dir)),
      await this.directWriteMinBytes(),
      inherited,
      adopted,
    );
    this.openAreas.set(id, area);
    return area;
  }

  /**
   * The write-path probe (IMPORT_DIRECT_WRITES=auto) taken now rather than by the first staging
   * area: the worker calls it as it starts, so that its first import does not wait ~0.25 s for it.
   */
  async prepareImports(): Promise<void> {
    await this.directWriteMinBytes();
  }

  /** The size from which a new area writes past the page cache, as measured where it is asked. */
  private async directWriteMinBytes(): Promise<number | undefined> {
    const { directWriteMinBytes, writePath } = this.options;
    if (directWriteMinBytes === undefined || writePath === undefined) return directWriteMinBytes;
    return (await writePath.direct(this.stagingRoot)) ? directWriteMinBytes : undefined;
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
    this.openAreas.delete(id);
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
    const made = this.openAreas.get(stagingId)?.madeDirectories();
    this.openAreas.delete(stagingId);
    if (options.readOnly && made) {
      // Every directory the area holds, as it made them: no walk of the tree (a read of every
      // entry of every directory, on this thread).
      for (const dir of made) if (dir.startsWith(source + sep)) chmodSync(dir, READ_ONLY_DIR);
    } else if (options.readOnly) await chmodTree(source, READ_ONLY_DIR);
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
