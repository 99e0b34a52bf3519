import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { DIRECT_WRITE_MIN_BYTES } from '../../../apps/provisioner/src/storage/filesystem/direct-object-writer';
import { startPrivateRedis } from '../../lib/private-redis';
import {
  cloneImportDataset,
  FileSpec,
  mixedDataset,
  smallFiles,
  writeImportDataset,
} from '../data/import-data';
import { benchServerUrl, createBenchDatabase, withClient } from '../lib/bench-database';
import type { BenchContext } from '../lib/context';
import { cpuMs, processMemory, RunningProcess, sleep } from '../lib/processes';
import {
  BENCH_WRITE_KEY,
  provisionerEnv,
  startProvisionerApi,
  startWorker,
} from '../lib/provisioner-process';
import { fmt, median, SuiteReport, table, verdict } from '../lib/report';
import { roundOrder } from '../lib/rounds';
import { findDirectory, inodeGroups } from '../lib/inode-groups';

/** The provisioner issue's "under 200 MB" (one 2 GiB file) and "under 300 MB" (four imports at once): decimal MB. */
const MEMORY_TARGET_BYTES = 200e6;
const CONCURRENT_MEMORY_TARGET_BYTES = 300e6;
const CONCURRENT_IMPORTS = 4;
/** How long the disk is left alone after a mass deletion before anything is timed again. */
export const SETTLE_AFTER_DELETE_MS = 60_000;
/** Files one disk probe creates (see settleDisk), and how long to probe at most. */
const PROBE_FILES = 1000;
const PROBE_INTERVAL_MS = 5_000;
const PROBE_DEADLINE_MS = 300_000;
/**
 * Settled: three probes in a row within this factor of the fastest probe of the run. A quiet
 * disk here probes at 40–90 ms, one after a mass deletion at 130–280 ms for about two minutes.
 */
const SETTLED_PROBE_RATIO = 1.5;
/**
 * And none of the three slower than this: a run that starts on a disk still busy with an earlier
 * deletion (another run's) has no fast probe yet to compare with, and three slow probes in a
 * row (570–730 ms here) would pass the ratio alone.
 */
const SETTLED_PROBE_MAX_MS = 200;

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/** Copy threads the worker starts unless IMPORT_COPY_THREADS says otherwise (its settings). */
export const COPY_THREADS = Math.min(availableParallelism(), 4);
/** The floor side of the small-files dataset (scripts/bench/lib/bare-copy.mjs). */
export const BARE_FLOOR = `bare copy, ${COPY_THREADS} threads`;
export const BARE_COPY_SCRIPT = join(__dirname, '..', 'lib', 'bare-copy.mjs');
/** The same bare copy hashing every file's bytes with SHA-256 (bare-copy.mjs `sha256`). */
export const BARE_HASHED_FLOOR = `bare copy + SHA-256, ${COPY_THREADS} threads`;
/** The single file's hash floor: its SHA-256 alone, on one core (scripts/bench/lib/hash-file.mjs). */
const HASH_FLOOR = 'SHA-256 alone, one core';
const HASH_FILE_SCRIPT = join(__dirname, '..', 'lib', 'hash-file.mjs');

/** The ceiling side of a dataset with large files (see timeDirectCeiling), and its target. */
const DIRECT_CEILING = 'dd oflag=direct';
const DIRECT_CEILING_TARGET = 0.8;
/** The hash floor of a dataset with large files: its SHA-256 on the copy threads (hash-threads.mjs). */
const HASH_THREADS_FLOOR = `SHA-256, ${COPY_THREADS} threads`;
const HASH_THREADS_SCRIPT = join(__dirname, '..', 'lib', 'hash-threads.mjs');
/**
 * Issue 61 (item 2): the import of large files within 0.9× of their floor, the slower of their
 * hash on the copy threads and the faster durable write of the same bytes (`dd oflag=direct`, or
 * `cp -r` and `sync -f`, the one with the lower median over the run), each round's own.
 */
const LARGE_FILES_FLOOR = `floor: slower of ${HASH_THREADS_FLOOR} and the faster (by median) of ${DIRECT_CEILING}, cp -r`;
const LARGE_FILES_FLOOR_TARGET = 0.9;
/**
 * Beside item 2's floor: a hashing copy (hashing-copy.mjs), every byte read, hashed and written on
 * the copy threads in blocking calls, then `sync -f`, each write path (through the page cache;
 * files of 1 MiB or more past it); the faster of the two is compared with the import. It does
 * the import's work on the bytes without its overlap of reading, hashing and writing.
 */
const HASHING_COPY = `hashing copy, ${COPY_THREADS} threads`;
const HASHING_COPY_CACHED = `${HASHING_COPY}, cached`;
const HASHING_COPY_DIRECT = `${HASHING_COPY}, direct`;
const HASHING_COPY_BOTH = `faster of ${HASHING_COPY_CACHED}, direct`;
const HASHING_COPY_SCRIPT = join(__dirname, '..', 'lib', 'hashing-copy.mjs');
/** 10,000 small files: the import 1.2× as fast as `cp -r` (`cp -r`'s time / the import's). */
const SMALL_FILES_CP_TARGET = 1.2;
/** Issue 61 (item 1): 10,000 small files at 0.85× the bare copy on the import's threads. */
export const SMALL_FILES_FLOOR_TARGET = 0.85;
/**
 * What the small files' import cannot do without, on top of the bare copy, each round's own: the
 * request's presence check (a dataset with a path missing is answered 409, not queued), the
 * queue's hand-over to the worker, and the durable publication (one rename, the parent
 * directory's fsync).
 */
const SMALL_FILES_FLOOR = `floor: ${BARE_FLOOR} + the import's request, queue wait and publish step`;

/** dd's block size: large enough that the kernel keeps several requests in flight per write. */
const DD_BLOCK = '8M';
/**
 * The single-file case (`--huge-gib`): its source, plus one target at a time (each side's is
 * deleted before the next side runs), plus a margin for the rest of the bench and the import's
 * own space check (payload plus margin).
 */
const HUGE_SPACE_FACTOR = 2.5;
/** A dataset's kept targets, with room for the file system's own blocks and the queues' data. */
const ROUNDS_SPACE_FACTOR = 1.1;
const HUGE_ROUNDS = 3;
/** Memory flat: the single file may raise the worker's peak this much over the 1 GiB dataset's. */
const HUGE_MEMORY_SLACK_BYTES = 8 * MiB;

/**
 * Reads every file once, so every side starts from a warm page cache. Done before each side, not
 * once per dataset: rclone's local backend drops the pages of every file it has read
 * (POSIX_FADV_DONTNEED, rclone backend/local/fadvise_unix.go), so whoever ran after it would
 * otherwise read the source from disk (10,000 small files: 0.7–0.9 s instead of 0.2 s).
 */
export function warm(dir: string): void {
  spawnSync('sh', ['-c', `find "${dir}" -type f -exec cat {} + > /dev/null`]);
}

/**
 * One disk probe: PROBE_FILES files of 4 KiB created in a new directory of `dir`, then `sync -f`.
 * Its files are kept (deleting them would be the very thing that slows the disk down) and go
 * with the bench's directory at the end.
 */
function probeDisk(dir: string, n: number): number {
  const target = join(dir, `probe-${n}`);
  const block = Buffer.alloc(4096, n % 251);
  const started = performance.now();
  mkdirSync(target, { recursive: true });
  for (let i = 0; i < PROBE_FILES; i++) writeFileSync(join(target, `f-${i}`), block);
  spawnSync('sync', ['-f', target]);
  return performance.now() - started;
}

/** What settleDisk saw: every probe's time, and how long it waited. */
export interface DiskSettling {
  /** PostgreSQL's CHECKPOINT before the probes; undefined when the bench's role may not run one. */
  checkpointMs?: number;
  probesMs: number[];
  waitedMs: number;
  settled: boolean;
}

/**
 * Waits until creating files costs what it costs on a quiet disk: this ext4 discards online, and
 * for minutes after a mass deletion creating a file is up to ten times slower, for every side
 * (10,000 files: `cp -r` 3.1 s instead of 0.4 s). Probes every 5 s until three probes in a row
 * are within SETTLED_PROBE_RATIO of the fastest this bench has seen, at most 5 min (then the
 * rounds run anyway, and the report says so).
 */
export async function settleDisk(
  dir: string,
  best: { ms: number },
  log: (line: string) => void,
): Promise<DiskSettling> {
  const started = Date.now();
  const checkpointMs = await checkpoint(log);
  const probesMs: number[] = [];
  for (;;) {
    const ms = probeDisk(dir, probesMs.length);
    probesMs.push(ms);
    best.ms = Math.min(best.ms, ms);
    const last = probesMs.slice(-3);
    const settled =
      last.length === 3 &&
      last.every((x) => x <= SETTLED_PROBE_RATIO * best.ms && x <= SETTLED_PROBE_MAX_MS);
    if (settled || Date.now() - started > PROBE_DEADLINE_MS) {
      log(
        `disk probes (ms per ${PROBE_FILES} files + sync): ${probesMs.map((x) => fmt(x, 0)).join(', ')}${settled ? '' : ' (not settled after 5 min)'}`,
      );
      return { checkpointMs, probesMs, waitedMs: Date.now() - started, settled };
    }
    await sleep(PROBE_INTERVAL_MS);
  }
}

/**
 * Has PostgreSQL write out now what earlier sections left in its buffers: its next checkpoint
 * would otherwise flush them during the rounds and hold up the commits of the queue on
 * PostgreSQL only. Returns how long it took.
 */
async function checkpoint(log: (line: string) => void): Promise<number | undefined> {
  const started = performance.now();
  try {
    await withClient(`${benchServerUrl()}/postgres`, (c) => c.query('CHECKPOINT'));
  } catch (error) {
    log(
      `no CHECKPOINT (${(error as Error).message}): PostgreSQL may flush earlier work during the rounds`,
    );
    return undefined;
  }
  return performance.now() - started;
}

/** Dirty plus writeback pages of the whole machine, in bytes (/proc/meminfo). */
function unwrittenBytes(): number {
  const info = readFileSync('/proc/meminfo', 'utf8');
  const field = (name: string) =>
    Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(info)?.[1] ?? 0) * 1024;
  return field('Dirty') + field('Writeback');
}

/**
 * Flushes what the previous side wrote (so it is not charged to the next one) and waits, bounded,
 * until the machine's dirty pages are down to a few MiB (other engineers write too).
 */
export async function settle(): Promise<void> {
  spawnSync('sync');
  const deadline = Date.now() + 10_000;
  while (unwrittenBytes() > 32 * MiB && Date.now() < deadline) await sleep(100);
  // A turn of the event loop: a tool run in blocking calls for longer than the API's keep-alive
  // (5 s) leaves fetch a pooled connection the server has closed, and a POST on it fails.
  await sleep(50);
}

/** rsync and rclone are Debian packages; installed here when missing and the bench runs as root. */
export function ensurePeers(log: (message: string) => void): void {
  const missing = ['rsync', 'rclone'].filter(
    (tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0,
  );
  if (missing.length === 0) return;
  const install = `apt-get install -y ${missing.join(' ')}`;
  if (process.getuid?.() !== 0)
    throw new Error(`${missing.join(' and ')} missing: run \`sudo ${install}\` first`);
  log(`installing ${missing.join(', ')} (${install})`);
  const result = spawnSync('sh', ['-c', `apt-get update -qq && ${install}`], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`${install} failed: install them by hand`);
}

export function toolVersion(command: string, args: string[]): string {
  const out = spawnSync(command, args, { encoding: 'utf8' });
  return (out.stdout ?? '').split('\n')[0].trim();
}

/** One peer tool's copy of `source` into a new `target`, then `sync -f` (syncfs) on the target. */
export function timeTool(command: string, args: string[], target: string): number {
  const started = performance.now();
  const copy = spawnSync(command, args, { encoding: 'utf8' });
  const sync = spawnSync('sync', ['-f', target]);
  const ms = performance.now() - started;
  if (copy.status !== 0 || sync.status !== 0)
    throw new Error(
      `${command} ${args[0]} (status ${copy.status}, signal ${copy.signal}) or sync (status ${sync.status}) failed: ${copy.stderr}${String(sync.stderr)}`,
    );
  return ms;
}

/** Milliseconds a command takes that writes nothing (a hash floor). */
function timeCommand(command: string, args: string[]): number {
  const started = performance.now();
  const done = spawnSync(command, args, { encoding: 'utf8' });
  if (done.status !== 0) throw new Error(`${command} ${args[0]} failed: ${done.stderr}`);
  return performance.now() - started;
}

/** Runs a command without blocking the event loop; rejects with its stderr when it fails. */
function run(command: string, args: string[], cwd?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} failed (${code}): ${stderr}`)),
    );
  });
}

/**
 * The disk's direct-write ceiling for the same bytes as an import, into a new `target`: every
 * file the import writes past the page cache (DIRECT_WRITE_MIN_BYTES or more) by its own
 * `dd oflag=direct`, the rest by one `cp --parents` through the page cache, all at once, then one
 * `sync -f` (the import's syncfs). At once: the import writes as many files at a time as it has
 * copy threads, and on this disk two `dd` at once wrote 2 × 512 MiB in 0.5–0.8 s where one
 * after the other took 0.7–1.2 s, so a sequential ceiling would flatter the import. No hashing and no
 * checks: what the disk takes, the source read from the same warm page cache as every side.
 */
async function timeDirectCeiling(
  source: string,
  target: string,
  files: FileSpec[],
): Promise<number> {
  const direct = files.filter((f) => f.size >= DIRECT_WRITE_MIN_BYTES);
  const cached = files.filter((f) => f.size < DIRECT_WRITE_MIN_BYTES).map((f) => f.path);
  const started = performance.now();
  mkdirSync(target, { recursive: true });
  for (const dir of new Set(direct.map((f) => dirname(join(target, f.path)))))
    mkdirSync(dir, { recursive: true });
  await Promise.all([
    ...direct.map((f) =>
      run('dd', [
        `if=${join(source, f.path)}`,
        `of=${join(target, f.path)}`,
        `bs=${DD_BLOCK}`,
        'oflag=direct',
        'status=none',
      ]),
    ),
    ...(cached.length > 0 ? [run('cp', ['--parents', '-t', target, ...cached], source)] : []),
  ]);
  await run('sync', ['-f', target]);
  return performance.now() - started;
}

/** Share of `path` in the page cache (util-linux fincore), NaN where fincore is missing. */
function cachedShare(path: string, size: number): number {
  const out = spawnSync('fincore', ['--bytes', '--noheadings', '--output', 'RES', path], {
    encoding: 'utf8',
  });
  return out.status === 0 ? Number(out.stdout.trim()) / size : NaN;
}

function freeBytes(dir: string): number {
  const stats = statfsSync(dir);
  return stats.bavail * stats.bsize;
}

/** Refuses a run, with the figures, where the disk cannot hold what it keeps; `why` says what. */
function checkSpace(dir: string, needed: number, why: string, remedy: string): void {
  const free = freeBytes(dir);
  if (free < needed)
    throw new Error(
      `${why} needs ${fmt(needed / GiB)} GiB free on the filesystem of ${dir}, which has ` +
        `${fmt(free / GiB)} GiB: ${remedy}`,
    );
}

/** Refuses the single-file case where the disk cannot hold it. */
function checkHugeSpace(dir: string, bytes: number): void {
  checkSpace(
    dir,
    HUGE_SPACE_FACTOR * bytes,
    `--huge-gib ${fmt(bytes / GiB, 2)} (${HUGE_SPACE_FACTOR}× the file: the source and one target at a time)`,
    'free some space or give a smaller size',
  );
}

/**
 * Refuses a dataset's rounds before the first where the disk cannot hold them: every side's
 * target of every round is kept until the dataset is done (deleting them would slow the disk
 * down mid-run), so 9 rounds of 8 sides of the 1 GiB mixed set need 72 GiB.
 */
function checkRoundsSpace(dir: string, name: string, rounds: number, sides: number, bytes: number) {
  const fit = Math.floor(freeBytes(dir) / (ROUNDS_SPACE_FACTOR * sides * bytes));
  checkSpace(
    dir,
    ROUNDS_SPACE_FACTOR * rounds * sides * bytes,
    `${name}: ${rounds} rounds × ${sides} sides × ${fmt(bytes / GiB, 2)} GiB (every target kept until the dataset is done)`,
    fit >= 1 ? `set BENCH_IMPORTS_ROUNDS=${fit} or fewer, or free some space` : 'free some space',
  );
}

/**
 * fetch, tried again on a transport error; every request here is safe to repeat (an import POST
 * is idempotent by its job id). The peer tools run in spawnSync, with the event loop blocked:
 * a kept-alive connection the API closed meanwhile is still pooled until the loop has read its
 * end, and a request sent on it fails with "other side closed" before reaching the server. That
 * one is retried at once (on a new connection, as undici itself does for a GET), so no pause is
 * charged to the import's clock; anything else is logged and retried after 200 ms.
 */
async function fetchRetrying(url: string, init?: RequestInit): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url, init);
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause;
      if (attempt >= 3) throw error;
      if (attempt === 1 && /other side closed/.test(String(cause))) continue;
      console.error(
        `[bench] ${init?.method ?? 'GET'} ${url} attempt ${attempt}: ${(error as Error).message} (${String(cause)})`,
      );
      await sleep(200);
    }
  }
}

interface ImportTiming {
  ms: number;
  id: string;
  /** From the record: queued until a worker took it (created_at → started_at). */
  queueMs: number;
  /** Where the time went, from the client's clock and the record's (one machine, one clock). */
  account: ImportAccount;
}

/**
 * One import's time, cut where the record and the client see it (ms): the POST until the record
 * was created (the request's own work), queued (created → started), the worker's (started →
 * finished), and how late the bench saw `imported` after finished_at (its polling; not counted).
 */
export interface ImportAccount {
  request: number;
  queue: number;
  worker: number;
  seenLate: number;
}

/** How often the bench asks for the record while an import runs (each ask costs the API CPU). */
export const POLL_MS = 50;

const headers = { 'X-API-Key': BENCH_WRITE_KEY, 'Content-Type': 'application/json' };

export async function postImport(
  apiUrl: string,
  datasetId: string,
  source = 'dropzone',
): Promise<string> {
  const res = await fetchRetrying(`${apiUrl}/datasets/${source}/import`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ dataset_id: datasetId }),
  });
  const record = (await res.json()) as { id: string };
  // 202 queued; after a retried POST also 200 (done) or 409 with the running record.
  if (![200, 202, 409].includes(res.status) || typeof record.id !== 'string')
    throw new Error(`import of ${datasetId} answered ${res.status}: ${JSON.stringify(record)}`);
  return record.id;
}

export async function awaitImported(
  apiUrl: string,
  id: string,
  pollMs = 20,
): Promise<{ created_at: string; started_at: string | null; finished_at: string | null }> {
  const deadline = Date.now() + 600_000;
  for (;;) {
    const poll = await fetchRetrying(`${apiUrl}/imports/${id}`, { headers });
    const state = (await poll.json()) as {
      state: string;
      error: unknown;
      created_at: string;
      started_at: string | null;
      finished_at: string | null;
    };
    if (state.state === 'imported') return state;
    if (state.state === 'failed' || state.state === 'rejected')
      throw new Error(`import ${id} ${state.state}: ${JSON.stringify(state.error)}`);
    if (Date.now() > deadline) throw new Error(`import ${id} still ${state.state} after 10 min`);
    await sleep(pollMs);
  }
}

/**
 * POST → the record says `imported`: from the moment the POST is sent to the record's
 * finished_at (the worker's clock, this machine's), so how often the bench polls adds nothing;
 * it polls every POLL_MS (each poll costs the API CPU the import shares the cores with).
 */
export async function timeImport(
  apiUrl: string,
  datasetId: string,
  source = 'dropzone',
  /**
   * How often the record is read. The time is the record's own (finished_at), so a slower poll
   * does not change it; it only spares the machine the API's answers (each costs it CPU).
   */
  pollMs = POLL_MS,
): Promise<ImportTiming> {
  const posted = Date.now();
  const id = await postImport(apiUrl, datasetId, source);
  const record = await awaitImported(apiUrl, id, pollMs);
  const account = importAccount(posted, record, Date.now());
  return {
    ms: account.request + account.queue + account.worker,
    id,
    queueMs: account.queue,
    account,
  };
}

/**
 * An imported record's times cut as ImportAccount: `posted` when the POST was sent, `seen` when
 * the bench read the record imported (both Date.now(), the clock of the record's times).
 */
export function importAccount(
  posted: number,
  record: { created_at: string; started_at: string | null; finished_at: string | null },
  seen: number,
): ImportAccount {
  const created = Date.parse(record.created_at);
  const startedAt = record.started_at ? Date.parse(record.started_at) : NaN;
  const finished = record.finished_at ? Date.parse(record.finished_at) : seen;
  return {
    request: created - posted,
    queue: startedAt - created,
    worker: finished - startedAt,
    seenLate: seen - finished,
  };
}

/** "request=12 queue=3 worker=930 (seen 14 ms later)" */
export function accountText(a: ImportAccount): string {
  return `request=${fmt(a.request, 0)} queue=${fmt(a.queue, 0)} worker=${fmt(a.worker, 0)} (seen ${fmt(a.seenLate, 0)} ms later)`;
}

/** One provisioner set-up (API and worker) on one queue backend, with the step times its worker logs. */
export interface Setup {
  label: string;
  backend: 'redis' | 'postgres';
  apiUrl: string;
  api: RunningProcess;
  worker: RunningProcess;
  steps: Map<string, string>;
  /** What the worker's write-path probe measured and chose, as it logged it (IMPORT_DIRECT_WRITES=auto). */
  writePaths: string[];
  stop(): Promise<void>;
}

function logCollector(steps: Map<string, string>, writePaths: string[]) {
  return (line: string): void => {
    const match = /import (\S+) steps \(ms\): ([^"]+)/.exec(line);
    if (match) steps.set(match[1], match[2]);
    else if (line.includes('"direct_ms"')) {
      const probe = JSON.parse(line) as {
        direct: boolean;
        probe_bytes: number;
        direct_ms: number | null;
        cached_ms: number | null;
        direct_runs_ms?: number[];
        cached_runs_ms?: number[];
      };
      const ms = (x: number | null, runs?: number[]) =>
        x === null ? '–' : `${fmt(x, 0)} ms${runs?.length ? ` (of ${runs.join(', ')})` : ''}`;
      writePaths.push(
        `direct ${ms(probe.direct_ms, probe.direct_runs_ms)}, cached ${ms(probe.cached_ms, probe.cached_runs_ms)} for ${fmt(probe.probe_bytes / MiB, 0)} MiB: ` +
          (probe.direct ? 'large files past the page cache' : 'large files through the page cache'),
      );
    }
  };
}

export async function startSetup(
  backend: 'redis' | 'postgres',
  base: string,
  dropzone: string,
  extra: NodeJS.ProcessEnv = {},
): Promise<Setup> {
  const stops: (() => Promise<void>)[] = [];
  try {
    let env: NodeJS.ProcessEnv;
    const storage = join(base, `storage-${backend}`);
    // The worker logs at info: its "steps" line is what the bench reads.
    if (backend === 'redis') {
      const redis = await startPrivateRedis({ dir: join(base, 'redis') });
      stops.push(() => redis.stop());
      env = provisionerEnv({ redisUrl: redis.url, dropzone, storage, extra });
    } else {
      const database = await createBenchDatabase('imports');
      stops.push(() => database.drop());
      env = provisionerEnv({ databaseUrl: database.url, dropzone, storage, extra });
    }
    const api = await startProvisionerApi(env);
    stops.push(() => api.stop());
    const steps = new Map<string, string>();
    const writePaths: string[] = [];
    const worker = await startWorker(
      { ...env, LOG_LEVEL: 'info' },
      logCollector(steps, writePaths),
    );
    stops.push(() => worker.stop());
    return {
      label: backend === 'redis' ? 'import (Redis)' : 'import (queue on PostgreSQL)',
      backend,
      apiUrl: api.url,
      api,
      worker,
      steps,
      writePaths,
      stop: async () => {
        for (const stop of stops.reverse()) await stop();
      },
    };
  } catch (error) {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    throw error;
  }
}

interface CopyCase {
  key: string;
  name: string;
  files: FileSpec[];
  /** Targets: minimum median ratio (peer time / import time) against each named peer. */
  targets: Record<string, number>;
  /** Has files written direct: measured against the disk's ceiling too (timeDirectCeiling). */
  ceiling?: boolean;
  /** Small files: measured against the bare copy on the import's threads too (bare-copy.mjs). */
  floor?: boolean;
}

/** One side of a round: a peer tool or an import set-up; `cpu` reads the CPU time it uses. */
export interface Side {
  label: string;
  run(round: number): Promise<number>;
  cpu(): number;
}

/**
 * One interleaved round: every side in the round's order (roundOrder), each from a warm page
 * cache of `source` after a settle; its time and CPU time appended under its label.
 */
export async function runRound(
  sides: Side[],
  round: number,
  source: string,
  ms: Map<string, number[]>,
  cpu: Map<string, number[]>,
): Promise<void> {
  for (const side of roundOrder(sides, round)) {
    warm(source);
    await settle();
    const before = side.cpu();
    ms.get(side.label)!.push(await side.run(round));
    cpu.get(side.label)!.push(side.cpu() - before);
  }
}

interface CaseResult {
  c: CopyCase;
  bytes: number;
  /** Milliseconds per round, by side label. */
  ms: Map<string, number[]>;
  /** CPU milliseconds per round (the worker's, all its threads; the peer tool's). */
  cpuMs: Map<string, number[]>;
  /** Phase lines per import set-up, one per round. */
  steps: Map<string, string[]>;
  queueMs: Map<string, number[]>;
  /** Where each round's import time went (see ImportAccount), per import set-up. */
  accounts: Map<string, ImportAccount[]>;
  loadBefore: number;
  /** The disk probes before the first round (see settleDisk). */
  disk: DiskSettling;
}

const PEERS = ['cp -r', 'rsync -a', 'rclone copy'] as const;
/** What an import is compared with, where the dataset has it. */
const COMPARED = [...PEERS, DIRECT_CEILING, BARE_FLOOR];

/** Median of the per-round ratios other/ours: above 1 means `ours` was faster. */
function ratio(result: CaseResult, ours: string, other: string): number {
  const a = result.ms.get(ours)!;
  const b = result.ms.get(other)!;
  return median(a.map((ms, i) => b[i] / ms));
}

export async function importsBench(ctx: BenchContext): Promise<SuiteReport> {
  // The single-file case is refused before anything is written (and checked again in its turn).
  const hugeBytes = ctx.hugeGiB === undefined ? undefined : Math.round(ctx.hugeGiB * GiB);
  if (hugeBytes !== undefined) checkHugeSpace(ctx.tempDir, hugeBytes);
  ensurePeers(ctx.log);
  const base = join(ctx.tempDir, 'imports');
  const dropzone = join(base, 'dropzone');
  const scale = ctx.quick ? 1 / 16 : 1;
  // Nine: on this disk a side's time moves up to 4x from one round to the next (1 GiB:
  // `cp -r` 0.7-3.2 s in one run), and with five rounds the median ratio of the two queue
  // set-ups swung from 0.88 to 1.13 between two runs of the same code.
  const rounds = ctx.quick ? 1 : Number(process.env.BENCH_IMPORTS_ROUNDS ?? 9);
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error('BENCH_IMPORTS_ROUNDS takes the number of rounds per dataset');
  // BENCH_IMPORTS_CASES=small (or mixed): one dataset only, while a change is iterated on.
  const only = process.env.BENCH_IMPORTS_CASES?.toUpperCase().split(',').filter(Boolean);
  const allCases: CopyCase[] = [
    {
      key: 'MIXED',
      name: `${fmt(scale, 3)} GiB mixed (3 large files + 1,000 small)`,
      files: mixedDataset(Math.round(GiB * scale)),
      targets: { 'cp -r': 0.6, 'rclone copy': 1, [DIRECT_CEILING]: DIRECT_CEILING_TARGET },
      ceiling: true,
    },
    {
      key: 'SMALL',
      name: `${ctx.quick ? '1,000' : '10,000'} small files of 4 KiB`,
      files: smallFiles(ctx.quick ? 1000 : 10_000, 4096),
      targets: {
        'cp -r': SMALL_FILES_CP_TARGET,
        'rsync -a': 1,
        [BARE_FLOOR]: SMALL_FILES_FLOOR_TARGET,
      },
      floor: true,
    },
  ];
  const cases = allCases.filter((c) => !only || only.includes(c.key));
  if (cases.length === 0) throw new Error('BENCH_IMPORTS_CASES takes mixed and/or small');
  const memoryBytes = ctx.quick ? 256 * MiB : 2 * GiB;
  const backends = ['redis', 'postgres'] as const;
  const importId = (c: CopyCase, backend: string, round: number) =>
    `${c.key}-${backend === 'redis' ? 'R' : 'P'}${round}`;
  // Source trees are written once; each import gets its own hard-linked copy (same inodes, same
  // warm page cache), since an import id is never imported twice.
  for (const c of cases) {
    writeImportDataset(dropzone, c.key, c.files);
    for (const backend of backends)
      for (let round = 0; round < rounds; round++)
        cloneImportDataset(dropzone, c.key, importId(c, backend, round));
  }
  // One import per set-up before the rounds: a worker's first import times the storage's write
  // paths (IMPORT_DIRECT_WRITES=auto, once a day), which no round should carry.
  for (const backend of backends)
    writeImportDataset(dropzone, `WARM-${backend}`, smallFiles(10, 4096));
  if (!cases.some((c) => c.key === 'MIXED'))
    writeImportDataset(dropzone, 'MIXED', allCases[0].files);
  for (let i = 1; i <= CONCURRENT_IMPORTS; i++)
    cloneImportDataset(dropzone, 'MIXED', `MIXED-C${i}`);
  if (hugeBytes !== undefined) cloneImportDataset(dropzone, 'MIXED', 'MIXED-H');
  writeImportDataset(dropzone, 'HUGE', [{ path: 'one-big-file.bin', size: memoryBytes }], true);
  ctx.log('datasets written');

  const setups: Setup[] = [];
  let writePaths: string[] = [];
  const results: CaseResult[] = [];
  let lastDeletion = 0;
  const fastestProbe = { ms: Infinity };
  let memory: { idle: number; before: number; after: number } | undefined;
  let concurrent: { peak: number; ms: number } | undefined;
  let huge: HugeResult | undefined;
  try {
    for (const backend of backends) {
      const setup = await startSetup(backend, base, dropzone);
      setups.push(setup);
      await timeImport(setup.apiUrl, `WARM-${backend}`);
    }
    for (const c of cases) {
      const source = join(dropzone, 'datasets', c.key, 'payload');
      const peerTarget = (peer: string, round: number) =>
        join(base, 'peers', `${c.key}-${peer.split(' ')[0]}-${round}`);
      const result: CaseResult = {
        c,
        bytes: c.files.reduce((sum, f) => sum + f.size, 0),
        ms: new Map(),
        cpuMs: new Map(),
        steps: new Map(setups.map((s) => [s.label, []])),
        queueMs: new Map(setups.map((s) => [s.label, []])),
        accounts: new Map(setups.map((s) => [s.label, []])),
        loadBefore: 0,
        disk: { probesMs: [], waitedMs: 0, settled: false },
      };
      const sides: Side[] = [
        ...setups.map((setup) => ({
          label: setup.label,
          run: async (round: number) => {
            const timing = await timeImport(setup.apiUrl, importId(c, setup.backend, round));
            result.queueMs.get(setup.label)!.push(timing.queueMs);
            result.accounts.get(setup.label)!.push(timing.account);
            result.steps.get(setup.label)!.push(setup.steps.get(timing.id) ?? '(no steps line)');
            return timing.ms;
          },
          cpu: () => cpuMs(setup.worker.child.pid!),
        })),
        {
          label: 'cp -r',
          run: async (round) =>
            timeTool('cp', ['-r', source, peerTarget('cp', round)], peerTarget('cp', round)),
          cpu: () => cpuMs('self'),
        },
        {
          label: 'rsync -a',
          run: async (round) =>
            timeTool(
              'rsync',
              ['-a', `${source}/`, peerTarget('rsync', round)],
              peerTarget('rsync', round),
            ),
          cpu: () => cpuMs('self'),
        },
        {
          label: 'rclone copy',
          // As a new user runs it: default transfers and checkers, checksums verified after each copy.
          run: async (round) =>
            timeTool(
              'rclone',
              [
                'copy',
                '-q',
                '--config',
                join(base, 'rclone.conf'),
                source,
                peerTarget('rclone', round),
              ],
              peerTarget('rclone', round),
            ),
          cpu: () => cpuMs('self'),
        },
        ...(c.floor
          ? [
              {
                label: BARE_FLOOR,
                run: async (round: number) =>
                  timeTool(
                    process.execPath,
                    [BARE_COPY_SCRIPT, source, peerTarget('bare', round), String(COPY_THREADS)],
                    peerTarget('bare', round),
                  ),
                cpu: () => cpuMs('self'),
              },
            ]
          : []),
        ...(c.ceiling
          ? [
              {
                label: DIRECT_CEILING,
                run: (round: number) => timeDirectCeiling(source, peerTarget('dd', round), c.files),
                cpu: () => cpuMs('self'),
              },
              ...([HASHING_COPY_CACHED, HASHING_COPY_DIRECT] as const).map((label) => {
                const direct = label === HASHING_COPY_DIRECT;
                const target = (round: number) => peerTarget(direct ? 'hcd' : 'hcc', round);
                return {
                  label,
                  run: async (round: number) =>
                    timeTool(
                      process.execPath,
                      [
                        HASHING_COPY_SCRIPT,
                        String(COPY_THREADS),
                        direct ? '1' : '0',
                        source,
                        target(round),
                      ],
                      target(round),
                    ),
                  cpu: () => cpuMs('self'),
                };
              }),
              {
                label: HASH_THREADS_FLOOR,
                run: async () =>
                  timeCommand(process.execPath, [
                    HASH_THREADS_SCRIPT,
                    String(COPY_THREADS),
                    source,
                  ]),
                cpu: () => cpuMs('self'),
              },
            ]
          : []),
      ];
      mkdirSync(join(base, 'peers'), { recursive: true });
      // After a deletion (the previous case's targets) the disk is left alone for a minute:
      // this ext4 discards online, and file creation right after a mass deletion is up to 10x slower.
      const quiet = lastDeletion + SETTLE_AFTER_DELETE_MS - Date.now();
      if (quiet > 0) {
        ctx.log(`waiting ${Math.round(quiet / 1000)} s after the last deletion`);
        await sleep(quiet);
      }
      checkRoundsSpace(base, c.name, rounds, sides.length, result.bytes);
      result.disk = await settleDisk(join(base, 'probes'), fastestProbe, ctx.log);
      for (const side of sides) {
        result.ms.set(side.label, []);
        result.cpuMs.set(side.label, []);
      }
      result.loadBefore = loadavg()[0];
      for (let round = 0; round < rounds; round++) {
        await runRound(sides, round, source, result.ms, result.cpuMs);
        ctx.log(
          `${c.name}, round ${round + 1}: ${sides.map((s) => `${s.label} ${fmt(result.ms.get(s.label)![round], 0)} ms`).join(', ')}`,
        );
        for (const setup of setups)
          ctx.log(
            `  ${setup.label}: ${accountText(result.accounts.get(setup.label)![round])}; ${result.steps.get(setup.label)![round]}`,
          );
        // BENCH_IMPORTS_INODES=1: the ext4 block groups each side's files went to (lib/inode-groups.ts).
        if (process.env.BENCH_IMPORTS_INODES === '1') {
          for (const setup of setups) {
            const published = findDirectory(
              join(base, `storage-${setup.backend}`, 'projects'),
              importId(c, setup.backend, round),
            );
            if (published) ctx.log(`  inode groups, ${setup.label}: ${inodeGroups(published)}`);
          }
          for (const peer of ['cp', 'rsync', 'rclone', 'bare'])
            if (existsSync(peerTarget(peer, round)))
              ctx.log(`  inode groups, ${peer}: ${inodeGroups(peerTarget(peer, round))}`);
        }
      }
      results.push(result);
      // Every target of this case goes now, and the next case waits a minute (above).
      rmSync(join(base, 'peers'), { recursive: true, force: true });
      for (const backend of backends)
        rmSync(join(base, `storage-${backend}`, 'projects'), { recursive: true, force: true });
      lastDeletion = Date.now();
    }

    // What each worker's write-path probe chose for the rounds above (logged as it started).
    writePaths = setups.map((s) => `${s.label}: ${s.writePaths[0] ?? 'no probe line'}`);

    // BENCH_IMPORTS_MEMORY=0: the rounds only, while a change is iterated on.
    const measureMemory = process.env.BENCH_IMPORTS_MEMORY !== '0';
    // Memory: the Redis set-up's worker (its whole life's peak) on one 2 GiB file.
    const redisSetup = setups.find((s) => s.backend === 'redis')!;
    const pid = redisSetup.worker.child.pid!;
    const before = processMemory(pid, 'VmHWM');
    if (measureMemory) await timeImport(redisSetup.apiUrl, 'HUGE');
    if (measureMemory)
      memory = { idle: processMemory(pid, 'VmRSS'), before, after: processMemory(pid, 'VmHWM') };
    if (memory)
      ctx.log(
        `worker peak RSS ${fmt(memory.after / MiB)} MiB (peak before the 2 GiB import ${fmt(before / MiB)} MiB)`,
      );
    for (const setup of setups.splice(0)) await setup.stop();

    // Four imports at once on one worker allowed to run four.
    if (!measureMemory)
      return report(ctx, results, rounds, memoryBytes, memory, concurrent, huge, writePaths);
    const busy = await startSetup('redis', base, dropzone, {
      IMPORT_CONCURRENCY: String(CONCURRENT_IMPORTS),
    });
    setups.push(busy);
    const started = performance.now();
    const ids = await Promise.all(
      Array.from({ length: CONCURRENT_IMPORTS }, (_, i) =>
        postImport(busy.apiUrl, `MIXED-C${i + 1}`),
      ),
    );
    await Promise.all(ids.map((id) => awaitImported(busy.apiUrl, id)));
    concurrent = {
      peak: processMemory(busy.worker.child.pid!, 'VmHWM'),
      ms: performance.now() - started,
    };
    ctx.log(
      `worker peak RSS with ${CONCURRENT_IMPORTS} imports at once ${fmt(concurrent.peak / MiB)} MiB (${fmt(concurrent.ms, 0)} ms)`,
    );
    for (const setup of setups.splice(0)) await setup.stop();

    if (hugeBytes !== undefined) {
      // What the memory imports published goes first: the single file needs the space.
      rmSync(join(base, 'storage-redis', 'projects'), { recursive: true, force: true });
      huge = await hugeFileCase(ctx, {
        base,
        dropzone,
        bytes: hugeBytes,
        baseline: cases[0].name,
        setups,
        fastestProbe,
      });
    }
  } finally {
    for (const setup of setups) await setup.stop().catch(() => undefined);
    rmSync(base, { recursive: true, force: true });
  }
  return report(ctx, results, rounds, memoryBytes, memory, concurrent, huge, writePaths);
}

/** The single-file case (`--huge-gib`): an import and `dd oflag=direct` of one file, per round. */
interface HugeResult {
  bytes: number;
  baseline: string;
  rounds: number;
  /** Milliseconds, CPU milliseconds, and the source's share in the page cache, per round by side. */
  ms: Map<string, number[]>;
  cpuMs: Map<string, number[]>;
  cached: Map<string, number[]>;
  steps: string[];
  loadBefore: number;
  /** A fresh worker's peak RSS after the mixed dataset (`baseline`), then after the rounds. */
  peakAfterMixed: number;
  peakAfterHuge: number;
}

const HUGE_IMPORT = 'import (Redis)';

/**
 * One file of `bytes` (pseudo-random, not sparse, so the disk cannot take a shortcut), imported
 * by a fresh worker that first imported the 1 GiB mixed dataset (memory flat: its peak must not
 * grow with the file), beside `dd oflag=direct` of the same file, in HUGE_ROUNDS rounds, the
 * order swapped each round (roundOrder's rotation and reversal cancel out for two sides). Each
 * side's target is deleted after it (the disk holds the source and one target), and the next
 * side waits for the disk to settle from that deletion. A file this size may not stay whole in
 * the page cache: each side reads it once more before it starts, and the report says how much
 * of it was cached.
 */
async function hugeFileCase(
  ctx: BenchContext,
  where: {
    base: string;
    dropzone: string;
    bytes: number;
    /** The mixed dataset's name (its clone MIXED-H is imported first). */
    baseline: string;
    setups: Setup[];
    fastestProbe: { ms: number };
  },
): Promise<HugeResult> {
  const { base, dropzone, bytes } = where;
  checkHugeSpace(base, bytes);
  const rounds = ctx.quick ? 1 : HUGE_ROUNDS;
  const key = 'ONEFILE';
  const file = 'one-large-file.bin';
  writeImportDataset(dropzone, key, [{ path: file, size: bytes }]);
  for (let round = 0; round < rounds; round++) cloneImportDataset(dropzone, key, `${key}-${round}`);
  const source = join(dropzone, 'datasets', key, 'payload', file);
  ctx.log(`${fmt(bytes / GiB, 2)} GiB single-file dataset written`);

  const setup = await startSetup('redis', base, dropzone);
  where.setups.push(setup);
  const pid = setup.worker.child.pid!;
  const published = join(base, 'storage-redis', 'projects');
  await timeImport(setup.apiUrl, 'MIXED-H');
  const peakAfterMixed = processMemory(pid, 'VmHWM');
  rmSync(published, { recursive: true, force: true });

  const result: HugeResult = {
    bytes,
    baseline: where.baseline,
    rounds,
    ms: new Map(),
    cpuMs: new Map(),
    cached: new Map(),
    steps: [],
    loadBefore: 0,
    peakAfterMixed,
    peakAfterHuge: NaN,
  };
  const ddTarget = join(base, 'peers', 'huge-dd');
  const sides: (Side & { clean(): void })[] = [
    {
      label: HUGE_IMPORT,
      run: async (round) => {
        const timing = await timeImport(setup.apiUrl, `${key}-${round}`);
        result.steps.push(setup.steps.get(timing.id) ?? '(no steps line)');
        return timing.ms;
      },
      cpu: () => cpuMs(pid),
      clean: () => rmSync(published, { recursive: true, force: true }),
    },
    {
      label: DIRECT_CEILING,
      run: () => timeDirectCeiling(dirname(source), ddTarget, [{ path: file, size: bytes }]),
      cpu: () => cpuMs('self'),
      clean: () => rmSync(ddTarget, { recursive: true, force: true }),
    },
    {
      label: HASH_FLOOR,
      run: async () => timeCommand(process.execPath, [HASH_FILE_SCRIPT, source]),
      cpu: () => cpuMs('self'),
      clean: () => undefined,
    },
  ];
  for (const side of sides) {
    result.ms.set(side.label, []);
    result.cpuMs.set(side.label, []);
    result.cached.set(side.label, []);
  }
  result.loadBefore = loadavg()[0];
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      await settleDisk(join(base, 'probes'), where.fastestProbe, ctx.log);
      warm(dirname(source));
      await settle();
      result.cached.get(side.label)!.push(cachedShare(source, bytes));
      const cpuBefore = side.cpu();
      result.ms.get(side.label)!.push(await side.run(round));
      result.cpuMs.get(side.label)!.push(side.cpu() - cpuBefore);
      side.clean();
    }
    ctx.log(
      `${fmt(bytes / GiB, 2)} GiB file, round ${round + 1}: ${sides.map((s) => `${s.label} ${fmt(result.ms.get(s.label)![round], 0)} ms`).join(', ')}`,
    );
  }
  result.peakAfterHuge = processMemory(pid, 'VmHWM');
  ctx.log(
    `worker peak RSS ${fmt(peakAfterMixed / MiB)} MiB after the mixed dataset, ${fmt(result.peakAfterHuge / MiB)} MiB after the ${fmt(bytes / GiB, 2)} GiB file`,
  );
  await setup.stop();
  where.setups.splice(where.setups.indexOf(setup), 1);
  rmSync(join(dropzone, 'datasets', key), { recursive: true, force: true });
  for (let round = 0; round < rounds; round++)
    rmSync(join(dropzone, 'datasets', `${key}-${round}`), { recursive: true, force: true });
  return result;
}

function report(
  ctx: BenchContext,
  results: CaseResult[],
  rounds: number,
  memoryBytes: number,
  memory: { idle: number; before: number; after: number } | undefined,
  concurrent: { peak: number; ms: number } | undefined,
  huge: HugeResult | undefined,
  writePaths: string[],
): SuiteReport {
  const imports = ['import (Redis)', 'import (queue on PostgreSQL)'];
  const checks: boolean[] = [];
  const lines: string[] = [
    '## Imports',
    '',
    'The built provisioner API and worker, twice: queue on Redis (production) and queue on PostgreSQL',
    "(`npm start`'s default), both running throughout, each with its own storage root on the same",
    'filesystem as the drop zone. Import time: from the POST until the record says `imported`',
    '(preflight, copy + SHA-256 of every byte, verification against the manifest, syncfs, publish):',
    "from the moment the POST is sent to the record's `finished_at` (set by the worker as it marks the",
    `import done; one machine, one clock). The bench polls the record every ${POLL_MS} ms, and how late it sees`,
    '`imported` after `finished_at` is not counted (it is given per round under the dataset).',
    "Peers: `cp -r`, `rsync -a` and `rclone copy` (default settings; rclone checks each copy's checksum),",
    `each followed by \`sync -f\` on its target. Every side starts from a warm page cache: the source is read again`,
    `before each side, as rclone drops the cached pages of what it reads.${ctx.quick ? ' **Quick mode: not a real figure.**' : ''}`,
    '',
    `Configuration measured: worker settings as shipped (IMPORT_CONCURRENCY unset = 2; IMPORT_COPY_THREADS unset =`,
    `min(cores, 4) = ${COPY_THREADS} copy threads, which copy and hash every file; IMPORT_DIRECT_WRITES unset = auto, files`,
    `of 1 MiB or more written past the page cache with O_DIRECT unless the worker's probe found the cache faster, smaller`,
    `ones through it), one import at a time;`,
    `${availableParallelism()} cores. rsync: ${toolVersion('rsync', ['--version'])}; rclone: ${toolVersion('rclone', ['version'])}; ${toolVersion('cp', ['--version'])}.`,
    '',
    `${rounds} interleaved rounds per dataset: in each, every side copies the same source tree (written once;`,
    'the imports read hard-linked copies of it) into a new target, in an order rotated each round (reversed every other round), after a',
    "`sync` and until the dirty pages have drained. Nothing is deleted during a dataset's rounds; its targets",
    `are deleted after them and the next dataset starts ${SETTLE_AFTER_DELETE_MS / 1000} s later at the earliest, once disk probes say the disk has`,
    'settled (this disk discards online; creating files right after a mass deletion is several times slower,',
    "for every side, for minutes). Ratio: the other side's time",
    "divided by the import's, per round; its median is the figure (above 1: the import is faster).",
    'CPU: user + system time of the worker process (all its threads) or of the peer tool and its `sync`; CPU / wall',
    'says what limits a side: near 2 both cores were its own, well below 1 it waited (for the disk, or for the',
    'CPU other work on the machine held; compare the load average).',
    "On a virtual machine, writing through the page cache can cost the guest's kernel 0.5–3 s of CPU per GiB,",
    "varying with the host from one moment to the next (the peers' CPU per round shows it): the import's",
    'large files skip that copy (O_DIRECT), its small files do not.',
    '',
    `Ceiling (\`${DIRECT_CEILING}\`, datasets with large files): the disk's direct-write ceiling for the same bytes. Each file the`,
    `import writes past the page cache (${DIRECT_WRITE_MIN_BYTES / MiB} MiB or more) is written by its own \`dd bs=${DD_BLOCK} oflag=direct\`, the small files by one`,
    '`cp --parents` through the page cache, all at once (the import writes a file per copy thread at a time; two `dd`',
    'at once outran two in a row on this disk), then one `sync -f`, as the import flushes its small files with one syncfs.',
    `No hashing and no checks: what the disk takes. Target: the import within ${DIRECT_CEILING_TARGET}× of it (ceiling time / import time).`,
    '',
    `Floor of the large files (issue 61 item 2), each round: the slower of \`${HASH_THREADS_FLOOR}\` (\`scripts/bench/lib/hash-threads.mjs\`:`,
    `every file's SHA-256 on as many worker threads as the import's copy threads, each taking the next file as it is free, largest`,
    'first, in blocking 1 MiB reads, written nowhere: no import that hashes every byte is faster) and the faster durable write of',
    `the same bytes (\`${DIRECT_CEILING}\` above, or \`cp -r\` and \`sync -f\`: the one whose median over the run is lower, then that one's time in each round).`,
    `Target: the import within ${LARGE_FILES_FLOOR_TARGET}× of it (floor time / import time).`,
    "The workers choose their large files' write path by timing both ways on the storage disk as they start",
    '(`IMPORT_DIRECT_WRITES=auto`: several files at once in the copy threads\' chunks, hashed as they are written, the median',
    'of each way); what they measured is given under the dataset.',
    `Beside that floor, each round: the faster of \`${HASHING_COPY_CACHED}\` and \`${HASHING_COPY_DIRECT}\``,
    '(`scripts/bench/lib/hashing-copy.mjs`: every file read, hashed and written on the copy threads in blocking 4 MiB calls,',
    'each thread taking the next file as it is free, largest first, then one `sync -f`; through the page cache, or files of',
    "1 MiB or more past it with O_DIRECT; no checks, no records): the import's work on the bytes, both halves at once on the",
    "same cores, without the import's overlap of reading, hashing and writing. It is no floor: where the ratio is above 1 the",
    'import is ahead of it.',
    '',
    `Floor (\`${BARE_FLOOR}\`, the small files): \`scripts/bench/lib/bare-copy.mjs\`, the least a copy on the import's`,
    'threads does per file: each thread opens, reads, creates (exclusively) and writes its files in blocking calls, a',
    'directory at a time, then one `sync -f`; no hashing, no checks, no preflight walk, no records. Each thread makes',
    "a directory as it reaches it, as the import's main thread makes each as it hands out its first file, so ext4",
    "spreads the files of both over the block groups alike (made all at once, the floor's directories would share one",
    "group and most of its files would go to groups picked by a hash, away from any a deletion had just freed:",
    '[decision](decisions/bare-copy-places-files-as-the-import.md)). It shows what the',
    "machine allows: where it is not ahead of `cp -r` by the import's target, no import can be.",
    `Target (issue 61 item 1): the import within ${SMALL_FILES_FLOOR_TARGET}× of it (floor time / import time). The row`,
    `\`${SMALL_FILES_FLOOR}\` adds to each round's bare copy what that round's import could not leave out:`,
    "the request's presence check (contract §2: a dataset with a manifest path missing is answered 409, not queued),",
    "the queue's hand-over to the worker, and the durable publication (the publish step: one rename and the",
    "parent directory's fsync). It is the most the import could reach against the bare copy in that run.",
    '',
  ];
  for (const r of results) {
    lines.push(
      `### ${r.c.name} (${fmt(r.bytes / MiB)} MiB; load average ${fmt(r.loadBefore, 2)} when it started)`,
      '',
      `Disk before the first round: PostgreSQL's CHECKPOINT ${r.disk.checkpointMs === undefined ? 'not allowed' : `in ${fmt(r.disk.checkpointMs, 0)} ms`}, then ${r.disk.probesMs.length} probe(s) of ${PROBE_FILES} files + \`sync -f\` over ${fmt(r.disk.waitedMs / 1000, 0)} s, ` +
        `${r.disk.probesMs.map((x) => fmt(x, 0)).join(', ')} ms: ${r.disk.settled ? `settled (the last three within ${SETTLED_PROBE_RATIO}× the fastest probe of the run, and under ${SETTLED_PROBE_MAX_MS} ms)` : '**not settled after 5 min**'}.`,
      '',
    );
    const sideRows = [...r.ms.entries()].map(([label, ms]) => {
      const cpu = r.cpuMs.get(label)!;
      return [
        ...timingCells(label, ms, cpu, r.bytes),
        fmt(median(cpu.map((x, i) => x / ms[i])), 2),
      ];
    });
    lines.push(table([...TIMING_HEADERS, 'CPU / wall (median)'], sideRows), '');
    const ratioRows: string[][] = [];
    for (const label of imports) {
      for (const peer of COMPARED.filter((side) => r.ms.has(side))) {
        const value = ratio(r, label, peer);
        const target = r.c.targets[peer];
        if (target !== undefined) checks.push(value >= target);
        const perRound = r.ms
          .get(label)!
          .map((ms, i) => fmt(r.ms.get(peer)![i] / ms, 2))
          .join(', ');
        ratioRows.push([
          label,
          peer,
          perRound,
          `**${fmt(value, 2)}×**`,
          target === undefined ? '–' : `≥ ${target}×: ${verdict(value >= target)}`,
        ]);
      }
    }
    if (r.c.ceiling) {
      // The faster write is the one with the lower median over the run (which side wins a single
      // round flips with the disk's noise, and taking each round's winner would put the floor
      // below both writes); each round then uses that write's own time, so the disk's moods are
      // the import's too (docs/decisions/large-files-floor-by-median.md).
      const hashMs = r.ms.get(HASH_THREADS_FLOOR)!;
      const write = [DIRECT_CEILING, 'cp -r'].reduce((a, b) =>
        median(r.ms.get(b)!) < median(r.ms.get(a)!) ? b : a,
      );
      const floor = hashMs.map((hash, i) => Math.max(hash, r.ms.get(write)![i]));
      lines.push(
        `Item 2's write side this run: \`${write}\` (the lower median of the two writes).`,
        '',
      );
      for (const label of imports) {
        const perRound = r.ms.get(label)!.map((ms, i) => floor[i] / ms);
        const value = median(perRound);
        checks.push(value >= LARGE_FILES_FLOOR_TARGET);
        ratioRows.push([
          label,
          LARGE_FILES_FLOOR,
          perRound.map((x) => fmt(x, 2)).join(', '),
          `**${fmt(value, 2)}×**`,
          `≥ ${LARGE_FILES_FLOOR_TARGET}×: ${verdict(value >= LARGE_FILES_FLOOR_TARGET)}`,
        ]);
        const hashingCopy = r.ms
          .get(HASHING_COPY_CACHED)!
          .map((cached, i) => Math.min(cached, r.ms.get(HASHING_COPY_DIRECT)![i]));
        const againstIt = r.ms.get(label)!.map((ms, i) => hashingCopy[i] / ms);
        ratioRows.push([
          label,
          HASHING_COPY_BOTH,
          againstIt.map((x) => fmt(x, 2)).join(', '),
          `**${fmt(median(againstIt), 2)}×**`,
          '–',
        ]);
      }
    }
    if (r.c.floor) {
      // The bare copy plus what no import can leave out, from each round's own import.
      const bare = r.ms.get(BARE_FLOOR)!;
      for (const label of imports) {
        const accounts = r.accounts.get(label)!;
        const steps = r.steps.get(label)!;
        const perRound = r.ms.get(label)!.map((ms, i) => {
          const publish = Number(/publish=(\d+)/.exec(steps[i])?.[1] ?? NaN);
          return (bare[i] + accounts[i].request + accounts[i].queue + publish) / ms;
        });
        const value = median(perRound);
        ratioRows.push([
          label,
          SMALL_FILES_FLOOR,
          perRound.map((x) => fmt(x, 2)).join(', '),
          `**${fmt(value, 2)}×**`,
          '–',
        ]);
      }
    }
    lines.push(table(['import', 'vs', 'ratio per round', 'median', 'target'], ratioRows), '');
    if (r.c.ceiling)
      lines.push(
        `The workers' write-path probe as they started (\`IMPORT_DIRECT_WRITES=auto\`, [decision](decisions/direct-writes-measured.md)), as logged: ${writePaths.join('; ')}.`,
        '',
      );
    const setupRatio = median(r.ms.get(imports[0])!.map((ms, i) => r.ms.get(imports[1])![i] / ms));
    const setupOk = setupRatio >= 1 / 1.1 && setupRatio <= 1.1;
    checks.push(setupOk);
    lines.push(
      `Queue on PostgreSQL vs Redis: Redis time / PostgreSQL time per round, median **${fmt(setupRatio, 2)}×** (within 10 %: ${verdict(setupOk)}).`,
      '',
      "Where each round's import time went (ms): `request` from the POST sent until the record was created",
      "(the API's presence check), `queue` until a worker started it, `worker` until `finished_at` (the steps",
      "below, the worker's pick-up, the catalog outbox and the trail), and how much later the bench's poll saw it",
      '(not counted):',
      '',
      table(
        ['import', 'request, queue, worker (seen later) per round'],
        imports.map((label) => [
          label,
          r.accounts
            .get(label)!
            .map(
              (a) =>
                `${fmt(a.request, 0)}, ${fmt(a.queue, 0)}, ${fmt(a.worker, 0)} (${fmt(a.seenLate, 0)})`,
            )
            .join('; '),
        ]),
      ),
      '',
      'Import step times per round (worker clock, ms; stage includes writing, flush is one syncfs;',
      'plan and stage each from its own start: they overlap, as a first attempt stages while preflight',
      'checks, docs/decisions/stage-while-checking.md; wall: from resolve to the end of publish), and the time each job waited in the queue',
      '(record: created → started):',
      '',
      table(
        ['import', 'steps per round', 'queue wait ms'],
        imports.map((label) => [
          label,
          r.steps
            .get(label)!
            .map((p) => `\`${p}\``)
            .join('<br>'),
          r.queueMs
            .get(label)!
            .map((x) => fmt(x, 0))
            .join(', '),
        ]),
      ),
      '',
    );
  }
  const memoryOk = memory !== undefined && memory.after < MEMORY_TARGET_BYTES;
  const concurrentOk = concurrent !== undefined && concurrent.peak < CONCURRENT_MEMORY_TARGET_BYTES;
  checks.push(memoryOk, concurrentOk);
  lines.push(
    '### Worker memory',
    '',
    table(
      ['case', 'peak resident set (VmHWM)', 'target'],
      [
        [
          `one ${fmt(memoryBytes / GiB, 2)} GiB file (Redis set-up's worker, after all the rounds above; its peak before this import ${memory ? fmt(memory.before / MiB) : '–'} MiB)`,
          memory
            ? `**${fmt(memory.after / MiB)} MiB** (${fmt(memory.after / 1e6)} MB)`
            : 'not measured',
          `< ${MEMORY_TARGET_BYTES / 1e6} MB: ${verdict(memoryOk)}`,
        ],
        [
          `${CONCURRENT_IMPORTS} imports of the mixed dataset at once (a fresh worker, IMPORT_CONCURRENCY=${CONCURRENT_IMPORTS}; all done in ${concurrent ? fmt(concurrent.ms, 0) : '–'} ms)`,
          concurrent
            ? `**${fmt(concurrent.peak / MiB)} MiB** (${fmt(concurrent.peak / 1e6)} MB)`
            : 'not measured',
          `< ${CONCURRENT_MEMORY_TARGET_BYTES / 1e6} MB: ${verdict(concurrentOk)}`,
        ],
      ],
    ),
    '',
    ...hugeReport(huge, checks),
    `Load average (1 min) when the report was written: ${loadavg()
      .map((x) => fmt(x, 2))
      .join(', ')} (other engineers share the machine).`,
  );
  return {
    name: 'imports',
    title: 'Imports',
    markdown: lines.join('\n'),
    targetsMet: checks.every(Boolean),
  };
}

/** The single-file section: its rows, and its two targets added to `checks`. */
const TIMING_HEADERS = ['side', 'ms per round', 'median ms', 'MB/s (median)', 'CPU ms per round'];

/** A side's first cells: its rounds, their median, MB/s at the median, CPU per round. */
function timingCells(label: string, ms: number[], cpu: number[], bytes: number): string[] {
  return [
    label,
    ms.map((x) => fmt(x, 0)).join(', '),
    `**${fmt(median(ms), 0)}**`,
    fmt(bytes / 1e6 / (median(ms) / 1000), 0),
    cpu.map((x) => fmt(x, 0)).join(', '),
  ];
}

function hugeReport(huge: HugeResult | undefined, checks: boolean[]): string[] {
  if (!huge)
    return [
      '### One large file against `dd oflag=direct`',
      '',
      'Not measured in this run (`npm run bench -- --only imports --huge-gib 20` measures one 20 GiB file).',
      '',
    ];
  const size = `${fmt(huge.bytes / GiB, 2)} GiB`;
  const rows = [...huge.ms.entries()].map(([label, ms]) => {
    const cpu = huge.cpuMs.get(label)!;
    return [
      ...timingCells(label, ms, cpu, huge.bytes),
      huge.cached
        .get(label)!
        .map((x) => (Number.isFinite(x) ? `${fmt(100 * x, 0)} %` : '–'))
        .join(', '),
    ];
  });
  const imports = huge.ms.get(HUGE_IMPORT)!;
  const ceiling = huge.ms.get(DIRECT_CEILING)!;
  const perRound = imports.map((ms, i) => ceiling[i] / ms);
  const ratioOk = median(perRound) >= DIRECT_CEILING_TARGET;
  const hashBound = median(huge.ms.get(HASH_FLOOR)!.map((ms, i) => ceiling[i] / ms));
  const growth = huge.peakAfterHuge - huge.peakAfterMixed;
  const memoryOk = growth <= HUGE_MEMORY_SLACK_BYTES;
  checks.push(ratioOk, memoryOk);
  return [
    `### One ${size} file against \`${DIRECT_CEILING}\` (\`--huge-gib\`; load average ${fmt(huge.loadBefore, 2)} when it started)`,
    '',
    `A fresh worker (queue on Redis) imports the ${huge.baseline} once, then one ${size} file of pseudo-random`,
    `bytes in ${huge.rounds} round(s), interleaved with \`dd bs=${DD_BLOCK} oflag=direct\` of the same file (then \`sync -f\`). Each side's`,
    'target is deleted after it and the next side waits for the disk probes to settle; before each side the source is',
    'read once more, and the share of it in the page cache is shown (a file this size may not stay whole in it).',
    '',
    table([...TIMING_HEADERS, 'source cached before each round'], rows),
    '',
    `Ceiling time / import time per round ${perRound.map((x) => fmt(x, 2)).join(', ')}: median **${fmt(median(perRound), 2)}×** ` +
      `(target ≥ ${DIRECT_CEILING_TARGET}×: ${verdict(ratioOk)}). Import steps per round (ms): ${huge.steps.map((p) => `\`${p}\``).join('; ')}.`,
    '',
    `The hash floor: \`${HASH_FLOOR}\` (\`scripts/bench/lib/hash-file.mjs\`: the file hashed by Node's OpenSSL in 1 MiB`,
    "chunks, the next read on libuv's pool meanwhile, as the import's threads do; written nowhere; the process's start",
    "included). A file's SHA-256 is one sequential pass on one core, so ceiling",
    `time / hash time, median **${fmt(hashBound, 2)}×**, is the most any import that hashes every byte can reach on this file here.`,
    '',
    `Memory flat: the worker's peak resident set (VmHWM) was **${fmt(huge.peakAfterMixed / MiB)} MiB** after the ${huge.baseline} and ` +
      `**${fmt(huge.peakAfterHuge / MiB)} MiB** after the ${size} file, ${fmt(growth / MiB)} MiB more (target ≤ ${HUGE_MEMORY_SLACK_BYTES / MiB} MiB: ${verdict(memoryOk)}).`,
    '',
  ];
}
