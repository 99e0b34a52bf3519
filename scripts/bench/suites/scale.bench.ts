import { createHash, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { writeImportDataset, FileSpec } from '../data/import-data';
import { BENCH_GLOBAL_KEY, migratedCatalogDatabase, startCatalog } from '../lib/catalog-process';
import { findDirectory, inodeGroups } from '../lib/inode-groups';
import type { BenchContext } from '../lib/context';
import { processMemory, RunningProcess, sleep } from '../lib/processes';
import { BENCH_WRITE_KEY } from '../lib/provisioner-process';
import { fmt, median, SuiteReport, table } from '../lib/report';
import {
  accountText,
  awaitImported,
  BARE_COPY_SCRIPT,
  BARE_FLOOR,
  BARE_HASHED_FLOOR,
  COPY_THREADS,
  ensurePeers,
  importAccount,
  type ImportAccount,
  POLL_MS,
  settle,
  settleDisk,
  SETTLE_AFTER_DELETE_MS,
  Setup,
  SMALL_FILES_FLOOR_TARGET,
  startSetup,
  timeTool,
  warm,
} from './imports.bench';

const MiB = 1024 ** 2;
/** The issue's line for the worker's and the API's peak resident set at every size. */
const FLAT_MEMORY_BYTES = 300 * MiB;
/**
 * What a filesystem deployment sets to take a million files (docs/decisions/import-plan-as-columns.md);
 * the shipped defaults stay lower while S3 imports are not flat.
 */
const SCALE_SETTINGS = {
  IMPORT_MAX_FILES: '1000000',
  SOURCE_MANIFEST_MAX_BYTES: String(128 * MiB),
};
/** Sizes when `--scale-sizes` does not name others. */
const DEFAULT_SIZES = [10_000, 100_000, 300_000, 1_000_000];
const QUICK_SIZES = [1_000, 5_000];
/**
 * Rounds per size when `--scale-rounds` does not say: one round on this disk moves by ±20 % and
 * more (rsync alone took 0.7-3.7 s for the same 10,000 files in different runs), so a size's
 * figure is the median of three, the sides taking turns at going first.
 */
const DEFAULT_ROUNDS = 3;
const QUICK_ROUNDS = 2;

/**
 * A realistic tree of `count` files of 4 KiB: 20 samples of 15 runs each, plus a deep chain per
 * sample (320 directories, some six levels down). The files are listed as a tool writing the
 * samples side by side would list them: the manifest interleaves the directories.
 */
export function scaleTree(count: number): FileSpec[] {
  const dirs: string[] = [];
  for (let s = 0; s < 20; s++) {
    const sample = `sample-${String(s).padStart(2, '0')}`;
    for (let r = 0; r < 15; r++) dirs.push(`${sample}/run-${String(r).padStart(2, '0')}`);
    dirs.push(`${sample}/derived/qc/a/b/c`);
  }
  return Array.from({ length: count }, (_, i) => ({
    path: `${dirs[i % dirs.length]}/f-${String(i).padStart(7, '0')}.dat`,
    size: 4096,
  }));
}

interface TimedAnswer {
  status: number;
  ms: number;
  bytes: number;
  body: Record<string, unknown>;
}

async function timed(url: string, init?: RequestInit): Promise<TimedAnswer> {
  const started = performance.now();
  const res = await fetch(url, {
    ...init,
    headers: { 'X-API-Key': BENCH_WRITE_KEY, 'Content-Type': 'application/json' },
  });
  const text = await res.text();
  return {
    status: res.status,
    ms: performance.now() - started,
    bytes: Buffer.byteLength(text),
    body: JSON.parse(text) as Record<string, unknown>,
  };
}

/** The sides of a round, in the order of round 1 (each later round starts one further on). */
const SIDES = ['rsync', 'import', 'bare', 'hashed'] as const;
type Side = (typeof SIDES)[number];

/**
 * The import's floor at the size issue 61 (item 1) measures it at: the bare copy of the same
 * tree (scripts/bench/lib/bare-copy.mjs) on the import's copy threads, in the same round.
 */
const FLOOR_TARGET_FILES = 10_000;

/**
 * One round of a size: the import of its own copy of the dataset, `rsync -a` of it, and the bare
 * copy of it (the floor).
 */
interface Round {
  /** The order the sides ran in (they take turns at going first). */
  order: Side[];
  loadBefore: number;
  request: TimedAnswer;
  /**
   * Whole import as a client sees it: from the POST sent until the record's finished_at, as the
   * imports section counts it (null if refused).
   */
  importMs: number | null;
  /** Where the import's time went (request, queue, worker) and how late the poll saw it. */
  account: ImportAccount | null;
  record: TimedAnswer | null;
  /** The import's `finished_at` until the catalog lists the copy (ms); null if not seen. */
  registerMs: number | null;
  steps: string;
  rsyncMs: number;
  /** The bare copy on the import's threads, then `sync -f` (the floor). */
  bareMs: number;
  /** The same bare copy hashing every file's bytes with SHA-256, then `sync -f` (BARE_HASHED_FLOOR). */
  hashedMs: number;
  /** The worker's peak resident set (VmHWM) once this round is done: its life's so far. */
  workerPeak: number;
}

interface SizeResult {
  files: number;
  writeMs: number;
  listing: TimedAnswer;
  diff: TimedAnswer;
  rounds: Round[];
  /** Medians over the rounds (import: null when refused). */
  importMs: number | null;
  rsyncMs: number;
  bareMs: number;
  hashedMs: number;
  /** Median of the rounds' rsync time / import time. */
  ratio: number;
  /** Median of the rounds' bare-copy time / import time. */
  floorRatio: number;
  /** Median of the rounds' hashing bare copy's time / import time. */
  hashedRatio: number;
  /** Median of the rounds' rsync time / hashing bare copy's time: below 1, rsync beats that floor. */
  rsyncOverHashed: number;
  apiPeak: number;
  workerPeak: number;
}

function sizes(ctx: BenchContext): number[] {
  return ctx.scaleSizes ?? (ctx.quick ? QUICK_SIZES : DEFAULT_SIZES);
}

function roundsOf(ctx: BenchContext): number {
  return ctx.scaleRounds ?? (ctx.quick ? QUICK_ROUNDS : DEFAULT_ROUNDS);
}

/**
 * Each size on a fresh API and worker (so each process's peak is that size's): the listing, the
 * diff, then rounds of the import request's answer and the import beside `rsync -a` and the bare
 * copy (the floor) of the same tree (one copy of the dataset per round, the sides taking turns
 * at going first), the record,
 * and both processes' peak resident sets. The settings are the defaults but
 * for the two a filesystem deployment raises to take a million files (SCALE_SETTINGS); a dataset
 * past them is refused, and the refusal's time is the figure.
 */
export async function scaleBench(ctx: BenchContext): Promise<SuiteReport> {
  ensurePeers(ctx.log);
  const results: SizeResult[] = [];
  const catalog = await startRegistrationCatalog();
  const disk: DiskState = { lastDeletion: 0, fastestProbe: { ms: Infinity } };
  try {
    for (const files of sizes(ctx)) results.push(await scaleOne(ctx, files, catalog, disk));
  } finally {
    await catalog.stop();
  }
  return report(results);
}

/** A catalog that takes the workers' registrations, with the project the datasets name. */
async function startRegistrationCatalog(): Promise<RegistrationCatalog> {
  const key = randomBytes(24).toString('hex');
  const db = await migratedCatalogDatabase();
  let catalog: (RunningProcess & { url: string }) | undefined;
  try {
    catalog = await startCatalog({
      ...db.env,
      REGISTRATION_API_KEY_SHA256: createHash('sha256').update(key).digest('hex'),
    });
    const created = await fetch(`${catalog.url}/api/projects`, {
      method: 'POST',
      headers: { 'X-API-Key': BENCH_GLOBAL_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ items: [{ acronym: BENCH_PROJECT, name: 'Scale bench' }] }),
    });
    if (created.status !== 200) throw new Error(`POST /api/projects: ${created.status}`);
  } catch (error) {
    await catalog?.stop();
    await db.database.drop();
    throw error;
  }
  const running = catalog;
  return {
    url: running.url,
    key,
    stop: async () => {
      await running.stop();
      await db.database.drop();
    },
  };
}

/** The project writeImportDataset's submissions name. */
const BENCH_PROJECT = 'BENCH';

/** What the sizes share about the disk (see settleDisk): when the last targets went, the best probe. */
interface DiskState {
  lastDeletion: number;
  fastestProbe: { ms: number };
}

interface RegistrationCatalog {
  url: string;
  key: string;
  stop(): Promise<void>;
}

/** Until the catalog lists the dataset titled `title` with a copy in storage: the time it did. */
async function registeredAt(catalog: RegistrationCatalog, title: string): Promise<number | null> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const res = await fetch(`${catalog.url}/api/datasets?title=${encodeURIComponent(title)}`, {
      headers: { 'X-API-Key': BENCH_GLOBAL_KEY },
    });
    const items = ((await res.json()) as { items?: { storages: unknown[] }[] }).items ?? [];
    if (items[0]?.storages.length) return Date.now();
    await sleep(20);
  }
  return null;
}

async function scaleOne(
  ctx: BenchContext,
  files: number,
  catalog: RegistrationCatalog,
  disk: DiskState,
): Promise<SizeResult> {
  const base = join(ctx.tempDir, `scale-${files}`);
  const dropzone = join(base, 'dropzone');
  const ids = Array.from({ length: roundsOf(ctx) }, (_, k) => `SCALE-${files}-${k + 1}`);
  try {
    const writeStarted = performance.now();
    for (const id of ids) writeImportDataset(dropzone, id, scaleTree(files));
    const writeMs = (performance.now() - writeStarted) / ids.length;
    ctx.log(`${ids.length} × ${files} files written, ${fmt(writeMs / 1000)} s each`);
    // Both sides write onto a settled disk: this ext4 discards online, and creating files in
    // the minutes after a mass deletion (the previous size's targets) is several times slower.
    // So nothing is deleted between the rounds; every target goes once the size is done.
    const quiet = disk.lastDeletion + SETTLE_AFTER_DELETE_MS - Date.now();
    if (quiet > 0) await sleep(quiet);
    await settleDisk(join(base, 'probes'), disk.fastestProbe, ctx.log);
    const setup = await startSetup('redis', base, dropzone, {
      ...SCALE_SETTINGS,
      CATALOG_URL: catalog.url,
      CATALOG_API_KEY: catalog.key,
    });
    try {
      const listing = await timed(`${setup.apiUrl}/datasets/dropzone?submission=SUB-${ids[0]}`);
      const diff = await timed(`${setup.apiUrl}/datasets/dropzone/diff`);
      const rounds: Round[] = [];
      for (const [k, id] of ids.entries()) {
        const round: Round = {
          ...(await scaleRound(setup, catalog, base, dropzone, id, k)),
          workerPeak: processMemory(setup.worker.child.pid!, 'VmHWM'),
        };
        rounds.push(round);
        ctx.log(
          `${files} files, round ${k + 1} (${round.order.join(', ')}): request ${round.request.status} in ${fmt(round.request.ms, 0)} ms; import ${round.importMs === null ? 'refused' : `${fmt(round.importMs / 1000, 2)} s`}; rsync ${fmt(round.rsyncMs / 1000, 2)} s; bare copy ${fmt(round.bareMs / 1000, 2)} s; with SHA-256 ${fmt(round.hashedMs / 1000, 2)} s; ${round.steps}`,
        );
        if (round.importMs === null) break;
      }
      const imported = rounds.every((r) => r.importMs !== null);
      const result: SizeResult = {
        files,
        writeMs,
        listing,
        diff,
        rounds,
        importMs: imported ? median(rounds.map((r) => r.importMs!)) : null,
        rsyncMs: median(rounds.map((r) => r.rsyncMs)),
        bareMs: median(rounds.map((r) => r.bareMs)),
        hashedMs: median(rounds.map((r) => r.hashedMs)),
        ratio: imported ? median(rounds.map((r) => r.rsyncMs / r.importMs!)) : NaN,
        floorRatio: imported ? median(rounds.map((r) => r.bareMs / r.importMs!)) : NaN,
        hashedRatio: imported ? median(rounds.map((r) => r.hashedMs / r.importMs!)) : NaN,
        rsyncOverHashed: median(rounds.map((r) => r.rsyncMs / r.hashedMs)),
        apiPeak: processMemory(setup.api.child.pid!, 'VmHWM'),
        workerPeak: processMemory(setup.worker.child.pid!, 'VmHWM'),
      };
      ctx.log(
        `${files} files: import ${result.importMs === null ? 'refused' : `${fmt(result.importMs / 1000, 2)} s`} (median), rsync ${fmt(result.rsyncMs / 1000, 2)} s, bare copy ${fmt(result.bareMs / 1000, 2)} s, with SHA-256 ${fmt(result.hashedMs / 1000, 2)} s; API ${fmt(result.apiPeak / MiB)} MiB, worker ${fmt(result.workerPeak / MiB)} MiB`,
      );
      return result;
    } finally {
      await setup.stop();
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
    disk.lastDeletion = Date.now();
  }
}

/**
 * One round (the `k`th): `rsync -a` of dataset `id`'s payload, its bare copy (the floor, as many
 * threads as the import copies on), the same bare copy hashing every file (SHA-256) and its
 * import, in turn (round k starts with side k of SIDES
 * and goes on in its order), each from a warm source tree and after the others' writes are out
 * (settle). The peers write into new directories under `base`.
 */
async function scaleRound(
  setup: Setup,
  catalog: RegistrationCatalog,
  base: string,
  dropzone: string,
  id: string,
  k: number,
): Promise<Omit<Round, 'workerPeak'>> {
  const source = join(dropzone, 'datasets', id, 'payload');
  const order = SIDES.map((_, i) => SIDES[(k + i) % SIDES.length]);
  let rsyncMs = NaN;
  let bareMs = NaN;
  let hashedMs = NaN;
  let imported: Omit<Round, SideFields> | undefined;
  let loadBefore = NaN;
  for (const side of order) {
    warm(source);
    await settle();
    if (Number.isNaN(loadBefore)) loadBefore = loadavg()[0];
    if (side === 'rsync') {
      const target = join(base, `rsync-${k + 1}`);
      rsyncMs = timeTool('rsync', ['-a', `${source}/`, `${target}/`], target);
    } else if (side === 'bare' || side === 'hashed') {
      const target = join(base, `${side}-${k + 1}`);
      const ms = timeTool(
        process.execPath,
        [BARE_COPY_SCRIPT, source, target, String(COPY_THREADS), ...(side === 'hashed' ? ['sha256'] : [])],
        target,
      );
      if (side === 'bare') bareMs = ms;
      else hashedMs = ms;
    } else imported = await importOnce(setup, catalog, id);
    // BENCH_IMPORTS_INODES=1: the ext4 block groups each side's files went to (lib/inode-groups.ts).
    if (process.env.BENCH_IMPORTS_INODES === '1') {
      const target =
        side === 'import'
          ? findDirectory(join(base, 'storage-redis', 'projects'), id)
          : join(base, `${side}-${k + 1}`);
      if (target) console.error(`[bench]   inode groups, ${side}: ${inodeGroups(target)}`);
    }
  }
  return { order, loadBefore, rsyncMs, bareMs, hashedMs, ...imported! };
}

/** What a round measures beside the import. */
type SideFields = 'order' | 'loadBefore' | 'rsyncMs' | 'bareMs' | 'hashedMs' | 'workerPeak';

/**
 * The import request and the import of dataset `id`, as a client sees it (from the POST sent
 * until the record's finished_at, the worker's clock on this machine, as the imports section
 * counts it: how often the bench polls adds nothing), and its registration.
 */
async function importOnce(
  setup: Setup,
  catalog: RegistrationCatalog,
  id: string,
): Promise<Omit<Round, SideFields>> {
  const posted = Date.now();
  const request = await timed(`${setup.apiUrl}/datasets/dropzone/import`, {
    method: 'POST',
    body: JSON.stringify({ dataset_id: id }),
  });
  if (request.status !== 202)
    return { request, importMs: null, account: null, record: null, registerMs: null, steps: '–' };
  const recordId = String(request.body.id);
  const times = await awaitImported(setup.apiUrl, recordId, POLL_MS);
  const seen = Date.now();
  const account = importAccount(posted, times, seen);
  const importMs = account.request + account.queue + account.worker;
  const record = await timed(`${setup.apiUrl}/imports/${recordId}`);
  const visibleAt = await registeredAt(catalog, id);
  const registerMs =
    visibleAt === null ? null : visibleAt - Date.parse(String(record.body.finished_at));
  return {
    request,
    importMs,
    account,
    record,
    registerMs,
    steps: `${setup.steps.get(recordId) ?? '–'} register=${registerMs === null ? 'not seen in 120 s' : Math.round(registerMs)}`,
  };
}

/** The reason an error envelope gives (`more.reason`), else its description. */
function refusal(body: Record<string, unknown>): string {
  const more = body.more as { reason?: unknown } | undefined;
  return String(more?.reason ?? body.description ?? '');
}

function report(results: SizeResult[]): SuiteReport {
  const baseline = results.find((r) => r.importMs !== null);
  const perFile = (r: SizeResult) => (r.importMs === null ? NaN : (r.importMs * 1000) / r.files);
  const imported = results.filter((r) => r.importMs !== null);
  const flat = results.every(
    (r) => r.apiPeak < FLAT_MEMORY_BYTES && r.workerPeak < FLAT_MEMORY_BYTES,
  );
  const growth = imported.every((r) => perFile(r) <= 1.25 * perFile(baseline!));
  const beatsRsync = imported.every((r) => r.ratio >= 1);
  const floorSize = imported.find((r) => r.files === FLOOR_TARGET_FILES);
  const atFloor = floorSize ? floorSize.floorRatio >= SMALL_FILES_FLOOR_TARGET : null;
  // The floors that stop a target missed: what no import can beat, in the same rounds.
  const hashedBeatsRsync = imported.filter((r) => r.rsyncOverHashed < 1);
  const refused = results.filter((r) => r.importMs === null);
  const registered = imported.every((r) => r.rounds.every((round) => round.registerMs !== null));
  const answer = (a: TimedAnswer) => `${a.status}, ${fmt(a.ms, 0)} ms, ${fmt(a.bytes / 1024)} KiB`;
  const seconds = (ms: number[]) => ms.map((x) => fmt(x / 1000, 2)).join(', ');
  const rows = results.map((r) => {
    const requests = r.rounds.map((round) => round.request);
    const record = r.rounds.find((round) => round.record)?.record;
    return [
      r.files.toLocaleString('en'),
      r.rounds.map((round) => fmt(round.loadBefore, 2)).join(', '),
      answer(r.listing),
      answer(r.diff),
      requests.every((q) => q.status === 202)
        ? `202 in ${requests.map((q) => fmt(q.ms, 0)).join(', ')} ms`
        : `${requests.map((q) => q.status).join(', ')}: ${refusal(requests.find((q) => q.status !== 202)!.body)}`,
      r.importMs === null
        ? '–'
        : `${seconds(r.rounds.map((round) => round.importMs!))}: **${fmt(r.importMs / 1000, 2)} s** (${fmt(perFile(r), 0)} µs a file)`,
      `${seconds(r.rounds.map((round) => round.rsyncMs))}: **${fmt(r.rsyncMs / 1000, 2)} s**`,
      `${seconds(r.rounds.map((round) => round.bareMs))}: **${fmt(r.bareMs / 1000, 2)} s**`,
      `${seconds(r.rounds.map((round) => round.hashedMs))}: **${fmt(r.hashedMs / 1000, 2)} s**`,
      r.importMs === null
        ? '–'
        : `${r.rounds.map((round) => fmt(round.rsyncMs / round.importMs!, 2)).join(', ')}: **${fmt(r.ratio, 2)}×**`,
      r.importMs === null
        ? '–'
        : `${r.rounds.map((round) => fmt(round.bareMs / round.importMs!, 2)).join(', ')}: **${fmt(r.floorRatio, 2)}×**`,
      r.importMs === null
        ? '–'
        : `${r.rounds.map((round) => fmt(round.hashedMs / round.importMs!, 2)).join(', ')}: **${fmt(r.hashedRatio, 2)}×**`,
      `${r.rounds.map((round) => fmt(round.rsyncMs / round.hashedMs, 2)).join(', ')}: **${fmt(r.rsyncOverHashed, 2)}×**`,
      record ? `${fmt(record.bytes / 1024)} KiB` : '–',
      `${fmt(r.apiPeak / MiB)} MiB`,
      `${r.rounds.map((round) => fmt(round.workerPeak / MiB)).join(', ')} MiB`,
    ];
  });
  const stepRows = imported.map((r) => [
    r.files.toLocaleString('en'),
    r.rounds
      .map(
        (round, k) =>
          `${k + 1} (${round.order.join(', ')}): ${accountText(round.account!)}; \`${round.steps}\``,
      )
      .join('<br>'),
  ]);
  const markdown = [
    '## Imports as the file count grows',
    '',
    'Datasets of 4 KiB files in 320 directories (20 samples × 15 runs and a deep chain each; the',
    'manifest interleaves the directories), each size on a fresh API and worker with the default',
    'settings but `IMPORT_MAX_FILES=1000000` and `SOURCE_MANIFEST_MAX_BYTES=134217728` (what a',
    'filesystem deployment sets for a million files). Each size runs in rounds, each round with',
    'its own copy of the dataset: its import, `rsync -a` of the same warm tree (then `sync -f`)',
    'and the floor, the three taking turns at going first (the order is given per round), all on',
    'a settled disk (probed as the imports section does; nothing is deleted until the size is',
    "done). The floor: `scripts/bench/lib/bare-copy.mjs` on as many threads as the import copies",
    'on (open, read, create and write each file in blocking calls, a directory per thread at a',
    "time, each directory made as its thread reaches it, as the import makes its own, so ext4 places",
    "both sides' files alike: [decision](decisions/bare-copy-places-files-as-the-import.md); then",
    'one `sync -f`; no hashing, no checks, no records). Beside it, the floor of the',
    `import's work on the bytes (\`${BARE_HASHED_FLOOR}\`): the same bare copy (\`sha256\`) hashing every`,
    "file's bytes with SHA-256 as it copies them, as the import must (no walk, no checks, no",
    'records); where `rsync -a` is faster than it, no import that hashes every byte on these',
    'threads can be as fast as rsync. Import time: from the POST sent until the record\'s',
    "`finished_at` (set by the worker as it marks the import done; one machine, one clock), as the",
    `imports section counts it; the bench polls the record every ${POLL_MS} ms, and how late it saw`,
    '`imported` is not counted (given per round with the steps). A size\'s figures are the',
    "medians of its rounds, every round shown (the first import is the fresh worker's first); a",
    "ratio is the median of the rounds' ratios. The worker registers each copy in a built catalog-api (its",
    "queue, its POST /api/registrations): `register` is the import's `finished_at` until the",
    'catalog lists the copy, and the peaks include that work. `--scale-sizes` names other sizes,',
    "`--scale-rounds` another number of rounds. Peaks are each process's VmHWM over its life (the worker's read after each round).",
    '',
    table(
      [
        'files',
        'load per round',
        'listing',
        'diff',
        'import requests',
        'import per round: median',
        'rsync -a per round: median',
        `floor (${BARE_FLOOR}) per round: median`,
        `floor (${BARE_HASHED_FLOOR}) per round: median`,
        'rsync/import per round: median',
        'floor/import per round: median',
        'floor with SHA-256/import per round: median',
        'rsync/floor with SHA-256 per round: median',
        'record',
        'API peak',
        'worker peak after each round',
      ],
      rows,
    ),
    '',
    "Where each round's import time went (ms): `request` from the POST sent until the record was",
    "created (the API's presence walk, contract §2), `queue` until a worker started it, `worker`",
    'until `finished_at`, and how late the poll saw it (not counted); then the worker\'s steps (ms):',
    '',
    table(['files', 'steps'], stepRows),
    '',
    `- cost per file within 1.25× of the smallest size's (medians): ${growth ? 'met' : '**missed**'}`,
    `- at least as fast as rsync at every imported size (median ratio): ${beatsRsync ? 'met' : '**missed**'}${
      hashedBeatsRsync.length === 0
        ? ''
        : `; rsync is faster than the floor with SHA-256 at ${hashedBeatsRsync.map((r) => `${r.files.toLocaleString('en')} (${fmt(r.rsyncOverHashed, 2)}×)`).join(', ')} files: no import that hashes every byte on ${COPY_THREADS} threads can meet it there`
    }`,
    `- ${FLOOR_TARGET_FILES.toLocaleString('en')} files at ${SMALL_FILES_FLOOR_TARGET}× the floor or better (median floor/import): ${atFloor === null ? 'not measured' : atFloor ? 'met' : '**missed**'}`,
    `- API and worker under ${FLAT_MEMORY_BYTES / MiB} MiB at every size: ${flat ? 'met' : '**missed**'}`,
    `- registered in the catalog in every round: ${registered ? 'met' : '**missed**'}`,
    `- sizes refused (IMPORT_MAX_FILES, SOURCE_MANIFEST_MAX_BYTES): ${
      refused.length === 0
        ? 'none'
        : `${refused.map((r) => r.files.toLocaleString('en')).join(', ')}: not imported`
    }`,
  ].join('\n');
  return {
    name: 'scale',
    title: 'Imports as the file count grows',
    markdown,
    targetsMet:
      growth && beatsRsync && atFloor !== false && flat && registered && refused.length === 0,
  };
}
