// The file-tree work of the filesystem storage and its staging areas: flushing files and whole
// filesystems, walking and re-moding a tree, telling a directory from one re-created under the
// same name.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, constants, opendirSync, Stats } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { TimeSlice } from '@app/platform';

export async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Inode numbers are reused at once; with the birth time (0 where unsupported) they are not. */
export function identityOf(stats: Stats): string {
  return `${stats.ino}:${stats.birthtimeMs}`;
}

export function isMissing(error: unknown): boolean {
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
export async function chmodTree(dir: string, dirMode: number): Promise<void> {
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

/** `sync -f` once, from a child of this process (what the syncer falls back to). */
function syncOnce(path: string): Promise<boolean> {
  return new Promise((resolvePromise) => {
    execFile('sync', ['-f', path], (error) => resolvePromise(error === null));
  });
}

/** The syncer's shell: `sync -f` for each line it reads, a line `1` or `0` for each. */
const SYNCER_SCRIPT =
  'while IFS= read -r p; do if sync -f "$p"; then echo 1; else echo 0; fi; done';

/**
 * One long-lived shell that runs `sync -f` for each path it is sent, in order. A child spawned
 * from the worker forks the worker, hundreds of MiB mapped: that fork took ~80 ms of its main
 * thread on a busy 2-core machine, once a second while an import records its files (~7 s of
 * the worker's CPU in a profiled 1 GiB S3-inbox import). The shell's own fork of `sync` is small. The shell
 * ends with its input when the worker exits; if it fails, what was waiting and what comes after
 * runs as a child of its own again.
 */
class Syncer {
  private child: ChildProcess | null = null;
  private failed = false;
  private readonly waiting: { path: string; done: (ok: boolean) => void }[] = [];
  private answers = '';

  sync(path: string): Promise<boolean> {
    const child = path.includes('\n') ? null : this.started();
    if (!child) return syncOnce(path);
    return new Promise((done) => {
      // Held open while an answer is awaited, so the process waits for it.
      if (this.waiting.length === 0) this.stdout(child).ref();
      this.waiting.push({ path, done });
      child.stdin!.write(`${path}\n`);
    });
  }

  /** The shell's output as the socket it is (ref and unref). */
  private stdout(child: ChildProcess): { ref(): void; unref(): void } {
    return child.stdout as unknown as { ref(): void; unref(): void };
  }

  private started(): ChildProcess | null {
    if (this.child || this.failed) return this.child;
    const child = spawn('sh', ['-c', SYNCER_SCRIPT], { stdio: ['pipe', 'pipe', 'ignore'] });
    this.child = child;
    // Never what keeps the worker running while no answer is awaited.
    child.unref();
    (child.stdin as unknown as { unref(): void }).unref();
    this.stdout(child).unref();
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (text: string) => {
      this.answers += text;
      for (let end = this.answers.indexOf('\n'); end >= 0; end = this.answers.indexOf('\n')) {
        const answer = this.answers.slice(0, end);
        this.answers = this.answers.slice(end + 1);
        this.waiting.shift()?.done(answer === '1');
        if (this.waiting.length === 0) this.stdout(child).unref();
      }
    });
    const fail = () => {
      if (this.child !== child) return;
      this.child = null;
      this.failed = true;
      for (const { path, done } of this.waiting.splice(0)) void syncOnce(path).then(done);
    };
    child.on('error', fail);
    child.on('exit', fail);
    child.stdin!.on('error', fail);
    return child;
  }
}

const syncer = new Syncer();

/**
 * syncfs(2) through coreutils' `sync -f` (run by the Syncer): one call flushes everything written
 * to the filesystem, which is what makes thousands of small files as fast as `cp -r` + `sync`.
 * Resolves false when the tool is missing, so the caller falls back to fsync per file.
 */
export function syncFilesystem(path: string): Promise<boolean> {
  return syncer.sync(path);
}

/** Every file below `dir` (relative paths), and the directories, deepest first. */
export async function treeOf(dir: string): Promise<{ files: string[]; directories: string[] }> {
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
