import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { decrypt, generateKeyPair, publicKeyFile, secretKeyFile } from '@app/crypt4gh';
import { startPrivateRedis } from '../../lib/private-redis';
import { migratedCatalogDatabase, startCatalog } from '../lib/catalog-process';
import type { BenchContext } from '../lib/context';
import { drsKeys, drsProject, grantedPassports, importAndRegister } from '../lib/drs-setup';
import { timeGet, timePost } from '../lib/http-load';
import { cpuMs, freePort, processMemory, PROVISIONER_DIST, RunningProcess } from '../lib/processes';
import {
  provisionerEnv,
  startProvisionerApi,
  startWorker,
  WORKER_NODE_ARGS,
} from '../lib/provisioner-process';
import { fmt, median, SuiteReport, table, verdict } from '../lib/report';
import { roundOrder } from '../lib/rounds';
import { bigFile, writeDataset } from '../data/drs-data';
import {
  cloneImportDataset,
  ImportCase,
  importCases,
  writeImportDataset,
} from '../data/import-data';
import { curlSpeed } from './drs.bench';
import {
  type DiskSettling,
  runRound,
  settleDisk,
  startSetup,
  timeImport,
  timeTool,
} from './imports.bench';

/** Archive mode at least this fraction of plain (issue 57 item 6), imports and downloads alike. */
const TARGET_RATIO = 0.85;
/**
 * "Flat with the file's size": from a 1 MiB file to the big one, an archive-mode process's peak
 * may grow at most this much more than the plain process's beside it (see report).
 */
const MEMORY_SLACK_BYTES = 16 * 2 ** 20;
const MiB = 2 ** 20;
const GiB = 2 ** 30;
const PROJECT = 'BENCH-C4GH';
const READER = 'bench-c4gh-reader';
const PLAIN = 'plain';
const ARCHIVE = 'archive (crypt4gh)';
const CP = 'cp -r';

interface Rounds {
  /** Per side label, one figure per round (ms for imports, plain-text bytes/s for downloads). */
  values: Map<string, number[]>;
  /** Worker (or peer tool) CPU ms per round, imports only. */
  cpu: Map<string, number[]>;
  loads: number[];
}

interface ImportResult {
  c: ImportCase;
  bytes: number;
  r: Rounds;
  /** CPU ms of archive mode's extra work alone (archiveExtraWorkMs), FLOOR_ROUNDS times. */
  extraCpuMs: number[];
  /** CPU ms of creating its two small objects per file alone (archiveLayoutMs), LAYOUT_ROUNDS times. */
  layoutCpuMs: number[];
  /** The disk before the first round (settleDisk). */
  disk: DiskSettling;
}

/** Times archive mode's extra work is measured alone per dataset (the least is the figure). */
const FLOOR_ROUNDS = 5;
const FLOOR_SCRIPT = join(__dirname, '..', 'lib', 'archive-floor.mjs');
/** The Crypt4GH library as built for the worker. */
const BUILT_CRYPT4GH = join(PROVISIONER_DIST, '..', '..', '..', 'libs/crypt4gh/src/index.js');

/**
 * Archive mode's extra computing alone for files of `sizes` (scripts/bench/lib/archive-floor.mjs),
 * FLOOR_ROUNDS times, each in a fresh process with the worker's V8 flags: CPU ms per time.
 */
function archiveExtraWorkMs(sizes: number[], sizesFile: string): number[] {
  writeFileSync(sizesFile, JSON.stringify(sizes));
  return Array.from({ length: FLOOR_ROUNDS }, () => {
    const run = spawnSync(
      process.execPath,
      [...WORKER_NODE_ARGS, FLOOR_SCRIPT, BUILT_CRYPT4GH, sizesFile],
      { encoding: 'utf8' },
    );
    if (run.status !== 0) throw new Error(`archive-floor.mjs failed: ${run.stderr}`);
    return Number(run.stdout.trim());
  });
}

/** Times the layout's extra objects are created alone per dataset (the least is the figure). */
const LAYOUT_ROUNDS = 3;
const LAYOUT_SCRIPT = join(__dirname, '..', 'lib', 'archive-layout-floor.mjs');

/**
 * Archive mode's two small objects per file (header, body checksum) created alone
 * (scripts/bench/lib/archive-layout-floor.mjs), LAYOUT_ROUNDS times, each in a fresh process and a
 * fresh directory below `root` (on the storages' filesystem; removed after): CPU ms per time.
 */
function archiveLayoutMs(paths: string[], root: string, pathsFile: string): number[] {
  writeFileSync(pathsFile, JSON.stringify(paths));
  return Array.from({ length: LAYOUT_ROUNDS }, (_, round) => {
    const dir = join(root, `layout-${round}`);
    mkdirSync(dir, { recursive: true });
    const run = spawnSync(process.execPath, [LAYOUT_SCRIPT, dir, pathsFile], { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`archive-layout-floor.mjs failed: ${run.stderr}`);
    return Number(run.stdout.trim());
  });
}

/** Median of the per-round ratios plain time / archive time (imports) or archive rate / plain rate (downloads). */
function perRound(r: Rounds, faster: (plain: number, archive: number) => number): number[] {
  const plain = r.values.get(PLAIN)!;
  return r.values.get(ARCHIVE)!.map((archive, i) => faster(plain[i], archive));
}

/** A dataset of the drop zone with another's payload as hard links (the same bytes, inodes and cache). */
function linkDataset(dropzone: string, from: string, to: string): void {
  const source = join(dropzone, 'datasets', from);
  const dir = join(dropzone, 'datasets', to);
  mkdirSync(join(dir, 'payload'), { recursive: true });
  for (const name of readdirSync(join(source, 'payload')))
    linkSync(join(source, 'payload', name), join(dir, 'payload', name));
  copyFileSync(join(source, 'manifest-sha256.txt'), join(dir, 'manifest-sha256.txt'));
  const meta = JSON.parse(readFileSync(join(source, 'dataset.json'), 'utf8')) as object;
  writeFileSync(join(dir, 'dataset.json'), JSON.stringify({ ...meta, dataset_id: to }));
  writeFileSync(join(dir, '.ready'), '');
}

/**
 * (a) Imports: a plain provisioner (API + worker, queue on its own Redis) and one in archive mode
 * running side by side, with `cp -r` + `sync -f` as the floor, in interleaved rounds per dataset.
 */
async function importRounds(
  ctx: BenchContext,
  base: string,
  archiveEnv: NodeJS.ProcessEnv,
  rounds: number,
): Promise<ImportResult[]> {
  // BENCH_ARCHIVE_CASES=small (or mixed): one dataset only, as the imports section's knob.
  const only = process.env.BENCH_ARCHIVE_CASES?.toUpperCase().split(',').filter(Boolean);
  const cases = importCases(ctx.quick).filter((c) => !only || only.includes(c.key));
  if (cases.length === 0) throw new Error('BENCH_ARCHIVE_CASES takes mixed and/or small');
  const dropzone = join(base, 'dropzone');
  const importId = (c: ImportCase, side: string, round: number) =>
    `${c.key}-${side === PLAIN ? 'P' : 'A'}${round}`;
  for (const c of cases) {
    writeImportDataset(dropzone, c.key, c.files);
    for (const side of [PLAIN, ARCHIVE])
      for (let round = 0; round < rounds; round++)
        cloneImportDataset(dropzone, c.key, importId(c, side, round));
  }
  ctx.log('import datasets written');
  const plain = await startSetup('redis', join(base, 'plain'), dropzone);
  const results: ImportResult[] = [];
  const fastestProbe = { ms: Infinity };
  try {
    const archive = await startSetup('redis', join(base, 'archive'), dropzone, archiveEnv);
    try {
      for (const c of cases) {
        const source = join(dropzone, 'datasets', c.key, 'payload');
        const peer = (round: number) => join(base, 'peers', `${c.key}-${round}`);
        const sides = [
          ...[
            { label: PLAIN, setup: plain },
            { label: ARCHIVE, setup: archive },
          ].map(({ label, setup }) => ({
            label,
            run: async (round: number) =>
              (await timeImport(setup.apiUrl, importId(c, label, round))).ms,
            cpu: () => cpuMs(setup.worker.child.pid!),
          })),
          {
            label: CP,
            run: async (round: number) => timeTool('cp', ['-r', source, peer(round)], peer(round)),
            cpu: () => cpuMs('self'),
          },
        ];
        mkdirSync(join(base, 'peers'), { recursive: true });
        const r: Rounds = { values: new Map(), cpu: new Map(), loads: [] };
        for (const side of sides) {
          r.values.set(side.label, []);
          r.cpu.set(side.label, []);
        }
        // The previous dataset's trees were just deleted: creating files is slower for minutes
        // after, and archive mode creates three per file where plain creates one.
        const disk = await settleDisk(join(base, 'probes'), fastestProbe, ctx.log);
        for (let round = 0; round < rounds; round++) {
          r.loads.push(loadavg()[0]);
          await runRound(sides, round, source, r.values, r.cpu);
          ctx.log(
            `${c.name}, round ${round + 1}: ${sides.map((s) => `${s.label} ${fmt(r.values.get(s.label)![round], 0)} ms`).join(', ')}`,
          );
        }
        r.loads.push(loadavg()[0]);
        // The floor (report): archive mode's extra work alone, right after the rounds.
        const extraCpuMs = archiveExtraWorkMs(
          c.files.map((f) => f.size),
          join(base, 'floor-sizes.json'),
        );
        ctx.log(
          `${c.name}, archive's extra work alone: ${extraCpuMs.map((x) => fmt(x, 0)).join(', ')} ms CPU`,
        );
        // Then its layout's two extra objects per file, beside the storages (the same filesystem).
        const layoutRoot = join(base, 'layout-floor');
        const layoutCpuMs = archiveLayoutMs(
          c.files.map((f) => f.path),
          layoutRoot,
          join(base, 'floor-paths.json'),
        );
        ctx.log(
          `${c.name}, archive's two extra objects per file alone: ${layoutCpuMs.map((x) => fmt(x, 0)).join(', ')} ms CPU`,
        );
        results.push({
          c,
          bytes: c.files.reduce((sum, f) => sum + f.size, 0),
          r,
          extraCpuMs,
          layoutCpuMs,
          disk,
        });
        rmSync(layoutRoot, { recursive: true, force: true });
        rmSync(join(base, 'peers'), { recursive: true, force: true });
        for (const side of ['plain', 'archive'])
          rmSync(join(base, side, 'storage-redis', 'projects'), { recursive: true, force: true });
      }
    } finally {
      await archive.stop();
    }
  } finally {
    await plain.stop();
  }
  rmSync(dropzone, { recursive: true, force: true });
  return results;
}

/** Peak RSS (VmHWM) of a process after the 1 MiB file and after the big one. */
interface Peaks {
  small: number;
  big: number;
}

interface DownloadResult {
  bigBytes: number;
  streamBytes: number;
  r: Rounds;
  worker: Map<string, Peaks>;
  api: Map<string, Peaks>;
}

/**
 * (b) and (c): a 1 MiB and a big file imported by a plain and an archive-mode provisioner (each
 * its own API, worker and storage, one catalog granting the reader), then the big file read
 * through its DRS access URL by curl: plain, and re-encrypted for the reader's key
 * (X-C4GH-Public-Key), interleaved. Peak RSS of each worker and API after the small file and
 * after the big one.
 */
async function downloadRounds(
  ctx: BenchContext,
  base: string,
  archiveEnv: NodeJS.ProcessEnv,
  rounds: number,
): Promise<DownloadResult> {
  const bigBytes = (ctx.quick ? 64 : 1024) * MiB;
  const reader = generateKeyPair();
  const keyHeader = `X-C4GH-Public-Key: ${Buffer.from(publicKeyFile(reader.publicKey)).toString('base64')}`;
  const { registrationKey, brokerKey, catalogPort, catalogUrl, catalogEnv } = await drsKeys(base);
  const catalogDb = await migratedCatalogDatabase();
  const redis = await startPrivateRedis({ dir: join(base, 'redis') });
  const catalog = await startCatalog({ ...catalogDb.env, ...catalogEnv }, [], catalogPort);
  const running: RunningProcess[] = [];
  try {
    const dropzone = join(base, 'drs-dropzone');
    writeDataset(dropzone, 'C4P-SMALL', { 'small.bin': bigFile(MiB) });
    writeDataset(dropzone, 'C4P-BIG', { 'big.bin': bigFile(bigBytes) });
    linkDataset(dropzone, 'C4P-SMALL', 'C4A-SMALL');
    linkDataset(dropzone, 'C4P-BIG', 'C4A-BIG');
    const bigSha = readFileSync(
      join(dropzone, 'datasets/C4P-BIG/manifest-sha256.txt'),
      'utf8',
    ).split(' ')[0];
    await drsProject(catalog.url, dropzone, {
      acronym: PROJECT,
      name: 'Crypt4GH bench',
      datasets: ['C4P-SMALL', 'C4P-BIG', 'C4A-SMALL', 'C4A-BIG'],
    });
    const sides = [
      { label: PLAIN, prefix: 'C4P', env: {} as NodeJS.ProcessEnv, headers: [] as string[] },
      { label: ARCHIVE, prefix: 'C4A', env: archiveEnv, headers: [keyHeader] },
    ];
    const apis = new Map<string, { url: string; pid: number }>();
    const workers = new Map<string, number>();
    const worker = new Map<string, Peaks>();
    const accessions: string[] = [];
    for (const side of sides) {
      const port = await freePort();
      const env = provisionerEnv({
        redisUrl: redis.url,
        dropzone,
        storage: join(base, `storage-${side.prefix}`),
        extra: {
          QUEUE_PREFIX: `bench_${side.prefix.toLowerCase()}`,
          CATALOG_URL: catalog.url,
          CATALOG_API_KEY: registrationKey,
          DRS_PUBLIC_URL: `http://127.0.0.1:${port}`,
          DRS_VISA_ISSUER: catalogUrl,
          DRS_CATALOG_BROKER_KEY: brokerKey,
          DRS_URL_SIGNING_KEY: createHash('sha256')
            .update(`${side.prefix}-${Date.now()}`)
            .digest('base64url'),
          ...side.env,
        },
      });
      const api = await startProvisionerApi(env, port);
      running.push(api);
      const w = await startWorker(env);
      running.push(w);
      apis.set(side.label, { url: api.url, pid: api.child.pid! });
      workers.set(side.label, w.child.pid!);
      accessions.push(await importAndRegister(api.url, `${side.prefix}-SMALL`));
      const small = processMemory(w.child.pid!, 'VmHWM');
      accessions.push(await importAndRegister(api.url, `${side.prefix}-BIG`));
      worker.set(side.label, { small, big: processMemory(w.child.pid!, 'VmHWM') });
    }
    const passports = await grantedPassports(
      catalog.url,
      catalogDb.database.url,
      READER,
      accessions,
      'Crypt4GH bench',
    );
    /** The access URL of the one file of a dataset (its DRS manifest names it). */
    const accessUrl = async (apiUrl: string, dataset: string): Promise<string> => {
      const drs = `${apiUrl}/ga4gh/drs/v1`;
      const access = async (id: string) => {
        const res = await timePost(
          `${drs}/objects/${id}/access/https`,
          JSON.stringify({ passports }),
        );
        if (res.status !== 200)
          throw new Error(`access ${id}: ${res.status} ${res.body.toString()}`);
        return (JSON.parse(res.body.toString()) as { url: string }).url;
      };
      const manifest = await timeGet(await access(`${PROJECT}~SUB-DRS~${dataset}`));
      const [file] = (JSON.parse(manifest.body.toString()) as { objects: { id: string }[] })
        .objects;
      return access(file.id);
    };
    const urls = new Map<string, string>();
    const api = new Map<string, Peaks>();
    for (const side of sides) {
      const { url, pid } = apis.get(side.label)!;
      curlSpeed(await accessUrl(url, `${side.prefix}-SMALL`), undefined, side.headers);
      const small = processMemory(pid, 'VmHWM');
      urls.set(side.label, await accessUrl(url, `${side.prefix}-BIG`));
      api.set(side.label, { small, big: NaN });
    }
    // Untimed: the reader decrypts the re-encrypted stream to the stored plain-text (and the
    // plain read puts the file in the page cache for both sides).
    curlSpeed(urls.get(PLAIN)!);
    const res = await fetch(urls.get(ARCHIVE)!, {
      headers: { 'X-C4GH-Public-Key': keyHeader.split(': ')[1] },
    });
    if (res.status !== 200 || !res.body) throw new Error(`re-encrypted download: ${res.status}`);
    let streamBytes = 0;
    const counted = async function* (): AsyncGenerator<Buffer> {
      for await (const chunk of Readable.fromWeb(res.body as never) as AsyncIterable<Buffer>) {
        streamBytes += chunk.length;
        yield chunk;
      }
    };
    const hash = createHash('sha256');
    for await (const part of decrypt(counted(), [reader.secretKey])) hash.update(part);
    if (hash.digest('hex') !== bigSha)
      throw new Error('the re-encrypted download does not decrypt to the file');
    ctx.log(`re-encrypted stream decrypts to the file (${streamBytes} bytes for ${bigBytes})`);
    const r: Rounds = {
      values: new Map(sides.map((s) => [s.label, []])),
      cpu: new Map(),
      loads: [],
    };
    for (let round = 0; round < rounds; round++) {
      r.loads.push(loadavg()[0]);
      for (const side of roundOrder(sides, round)) {
        const speed = curlSpeed(urls.get(side.label)!, undefined, side.headers);
        // In plain-text bytes per second: the Crypt4GH stream is a header and 28 bytes a segment longer.
        r.values
          .get(side.label)!
          .push(side.label === ARCHIVE ? (speed * bigBytes) / streamBytes : speed);
      }
      ctx.log(
        `download round ${round + 1}: ${sides.map((s) => `${s.label} ${fmt(r.values.get(s.label)![round] / 1e6, 0)} MB/s`).join(', ')}`,
      );
    }
    r.loads.push(loadavg()[0]);
    for (const side of sides)
      api.get(side.label)!.big = processMemory(apis.get(side.label)!.pid, 'VmHWM');
    return { bigBytes, streamBytes, r, worker, api };
  } finally {
    for (const child of running.reverse()) await child.stop();
    await catalog.stop();
    await redis.stop();
    await catalogDb.database.drop();
  }
}

/**
 * Archive mode (STORAGE_ENCRYPTION=crypt4gh) against plain storage in one run, issue 57 item 6:
 * (a) imports, (b) DRS downloads re-encrypted for the reader, (c) worker and API memory from a
 * 1 MiB file to the big one. The cipher alone against Node's is the `crypt4gh` suite.
 */
export async function crypt4ghArchiveBench(ctx: BenchContext): Promise<SuiteReport> {
  const base = join(ctx.tempDir, 'crypt4gh-archive');
  mkdirSync(base, { recursive: true });
  const keyFile = join(base, 'archive.sec');
  writeFileSync(keyFile, await secretKeyFile(generateKeyPair().secretKey), { mode: 0o600 });
  const archiveEnv = { STORAGE_ENCRYPTION: 'crypt4gh', C4GH_ARCHIVE_SECRET_KEY_FILE: keyFile };
  const importRoundCount = ctx.quick ? 2 : 7;
  const downloadRoundCount = ctx.quick ? 3 : 7;
  const imports = await importRounds(ctx, base, archiveEnv, importRoundCount);
  const downloads = await downloadRounds(ctx, base, archiveEnv, downloadRoundCount);
  return report(ctx, imports, downloads, importRoundCount, downloadRoundCount);
}

/**
 * What stops archive mode on this machine: its extra work alone (archiveExtraWorkMs), and with it
 * the creation of its two small objects per file (archiveLayoutMs), added to the plain import's
 * CPU and spread over every core, is the least it can take; plain's time over that is the most it
 * can reach against plain, whatever the import does (the second, with this layout).
 */
function floorParagraph(r: Rounds, extraCpuMs: number[], layoutCpuMs: number[]): string {
  const cores = availableParallelism();
  const plainMs = median(r.values.get(PLAIN)!);
  const plainCpuMs = median(r.cpu.get(PLAIN)!);
  // The least it took: a floor is what the work needs, and other work on the machine only adds.
  const extraMs = Math.min(...extraCpuMs);
  const layoutMs = Math.min(...layoutCpuMs);
  const computingFloorMs = Math.max(plainMs, (plainCpuMs + extraMs) / cores);
  const floorMs = Math.max(plainMs, (plainCpuMs + extraMs + layoutMs) / cores);
  const reach = plainMs / floorMs;
  const archiveMs = median(r.values.get(ARCHIVE)!);
  return [
    `Floor on these ${cores} cores: archive mode's extra computing alone (per file a data key and its header, every`,
    "byte sealed in 64 KiB segments, the sealed bytes' SHA-256; scripts/bench/lib/archive-floor.mjs, one core, a fresh process with the worker's flags,",
    `${FLOOR_ROUNDS} times after the rounds) took ${extraCpuMs.map((x) => fmt(x, 0)).join(', ')} ms of CPU (the least: ${fmt(extraMs, 0)}). Creating the two small`,
    'objects it stores beside each body (header and body checksum, in their mirrored directories, as the copy threads create',
    "them; scripts/bench/lib/archive-layout-floor.mjs, one core, a fresh process, on the storage's filesystem,",
    `${LAYOUT_ROUNDS} times after that) took ${layoutCpuMs.map((x) => fmt(x, 0)).join(', ')} ms of CPU (the least: ${fmt(layoutMs, 0)}). Added to the plain import's CPU`,
    `(median ${fmt(plainCpuMs, 0)} ms) and spread over the ${cores} cores: with the computing alone archive mode cannot take less than`,
    `${fmt(computingFloorMs, 0)} ms (plain / floor ${fmt(plainMs / computingFloorMs, 2)}×); with its objects too, **${fmt(floorMs, 0)} ms**: plain / floor, **${fmt(reach, 2)}×**, is the most`,
    `it can reach against plain here with this layout (target ${TARGET_RATIO}×: ${reach >= TARGET_RATIO ? 'within reach' : '**beyond this layout on this machine**'}).`,
    `The archive import took ${fmt(archiveMs / floorMs, 2)}× that floor; the rest is the import's own (for a large file, its`,
    'chain of read, hash, seal, hash and write runs on one copy thread).',
  ].join('\n');
}

const size = (bytes: number) =>
  bytes >= GiB ? `${fmt(bytes / GiB, 2)} GiB` : `${fmt(bytes / MiB, 1)} MiB`;
const loadRange = (loads: number[]) =>
  `${fmt(Math.min(...loads), 1)}–${fmt(Math.max(...loads), 1)}`;

function report(
  ctx: BenchContext,
  imports: ImportResult[],
  downloads: DownloadResult,
  importRoundCount: number,
  downloadRoundCount: number,
): SuiteReport {
  const checks: boolean[] = [];
  /** A quick run's figures say which side of a target they fall on, never that it is met. */
  const judge = (ok: boolean, [yes, no] = ['above', 'below']) =>
    ctx.quick ? `${ok ? yes : no} (quick: not judged)` : verdict(ok);
  const ratioTable = (what: string, rows: string[][]) =>
    table([what, 'ratio per round', 'median', 'target'], rows);
  const ratioRow = (label: string, ratios: number[]) => {
    const value = median(ratios);
    checks.push(value >= TARGET_RATIO);
    return [
      label,
      ratios.map((x) => fmt(x, 2)).join(', '),
      `**${fmt(value, 2)}×**`,
      `≥ ${TARGET_RATIO}×: ${judge(value >= TARGET_RATIO)}`,
    ];
  };
  const lines = [
    '## Crypt4GH archive mode',
    '',
    'Issue 57 item 6, side by side in one run: the built provisioner in archive mode (`STORAGE_ENCRYPTION=crypt4gh`,',
    'every file stored as Crypt4GH for the archive key, header apart from body) against the same build storing',
    'plain-text. Imports: two set-ups (API + worker, each its own Redis and storage root) running throughout, one',
    'import at a time, from the POST until the record says `imported`; `cp -r` + `sync -f` of the same tree beside them.',
    'Every side starts from a warm page cache after a `sync`, in an order rotated each round (reversed every',
    "other round). Ratio: plain import's time / archive import's time, per round; the median is the figure.",
    `Downloads: a ${size(downloads.bigBytes)} file read whole through its DRS access URL by curl (body to /dev/null), from the plain`,
    'provisioner and, re-encrypted for the reader (`X-C4GH-Public-Key`), from the archive one, interleaved; the',
    're-encrypted rate counts plain-text bytes (the stream is the header and 28 bytes a segment longer), and one',
    "untimed read beforehand is decrypted with the reader's key and checked against the file's SHA-256.",
    `Memory: peak RSS (VmHWM) of each worker and API after a 1 MiB file and after the ${size(downloads.bigBytes)} one (the same`,
    'process imports or serves both, the big file second). The plain process beside it is the control: its growth is',
    `warm-up, its streaming what the imports and DRS sections measure. Flat: archive mode grows less than ${MEMORY_SLACK_BYTES / MiB} MiB more`,
    `than plain (holding the file would add its size). Target: archive mode at least ${TARGET_RATIO}× plain. The cipher alone against Node's`,
    `raw ChaCha20-Poly1305 is the Crypt4GH section.${ctx.quick ? ' **Quick mode: not a real figure.**' : ''}`,
    '',
  ];
  for (const { c, bytes, r, extraCpuMs, layoutCpuMs, disk } of imports) {
    lines.push(
      `### Import: ${c.name} (${size(bytes)}; ${importRoundCount} rounds; load average ${loadRange(r.loads)})`,
      '',
      `Disk before the first round (as the imports section waits for it): ${disk.probesMs.length} probe(s) over ${fmt(disk.waitedMs / 1000, 0)} s, ` +
        `the fastest ${fmt(Math.min(...disk.probesMs), 0)} ms, the last three ${disk.probesMs
          .slice(-3)
          .map((x) => fmt(x, 0))
          .join(', ')} ms: ${disk.settled ? 'settled' : '**not settled after 5 min**'}.`,
      '',
      table(
        ['side', 'ms per round', 'median ms', 'MB/s (median)', 'CPU ms per round'],
        [...r.values.entries()].map(([label, ms]) => [
          label,
          ms.map((x) => fmt(x, 0)).join(', '),
          fmt(median(ms), 0),
          fmt(bytes / 1e6 / (median(ms) / 1000), 0),
          r.cpu
            .get(label)!
            .map((x) => fmt(x, 0))
            .join(', '),
        ]),
      ),
      '',
      ratioTable('import', [
        ratioRow(
          'archive vs plain (plain ms / archive ms)',
          perRound(r, (plain, archive) => plain / archive),
        ),
        [
          'plain vs `cp -r` (floor; cp ms / plain ms)',
          r.values
            .get(CP)!
            .map((cp, i) => cp / r.values.get(PLAIN)![i])
            .map((x) => fmt(x, 2))
            .join(', '),
          '–',
          '–',
        ],
      ]),
      '',
      floorParagraph(r, extraCpuMs, layoutCpuMs),
      '',
    );
  }
  const d = downloads.r;
  lines.push(
    `### Download: ${size(downloads.bigBytes)} through the DRS access URL (${downloadRoundCount} rounds; load average ${loadRange(d.loads)})`,
    '',
    table(
      ['side', 'MB/s per round (plain-text)', 'median MB/s'],
      [...d.values.entries()].map(([label, speeds]) => [
        label,
        speeds.map((x) => fmt(x / 1e6, 0)).join(', '),
        fmt(median(speeds) / 1e6, 0),
      ]),
    ),
    '',
    ratioTable('download', [
      ratioRow(
        're-encrypted vs plain (rate ratio)',
        perRound(d, (plain, archive) => archive / plain),
      ),
    ]),
    '',
    '### Memory with the file size',
    '',
  );
  const memoryRows: string[][] = [];
  for (const [who, peaks] of [
    ['worker', downloads.worker],
    ['API', downloads.api],
  ] as const) {
    const growth = (label: string) => peaks.get(label)!.big - peaks.get(label)!.small;
    for (const [label, p] of peaks) {
      // The plain process is the control: its growth is warm-up (the big file comes second),
      // its streaming is the imports and DRS suites' memory target. Archive mode must add nothing.
      const beyond = growth(label) - growth(PLAIN);
      const flat = beyond < MEMORY_SLACK_BYTES;
      if (label === ARCHIVE) checks.push(flat);
      memoryRows.push([
        `${who}, ${label}`,
        fmt(p.small / MiB, 0),
        fmt(p.big / MiB, 0),
        fmt(growth(label) / MiB, 1),
        label === ARCHIVE ? fmt(beyond / MiB, 1) : '–',
        label === ARCHIVE ? judge(flat, ['flat', 'grew']) : '–',
      ]);
    }
  }
  lines.push(
    table(
      [
        'process',
        'peak MiB after 1 MiB',
        `peak MiB after ${size(downloads.bigBytes)}`,
        'growth MiB',
        'growth beyond plain MiB',
        `flat (beyond plain < ${MEMORY_SLACK_BYTES / MiB} MiB)`,
      ],
      memoryRows,
    ),
    '',
    ctx.quick ? 'Targets not judged: quick mode.' : `Targets ${verdict(checks.every(Boolean))}.`,
  );
  return {
    name: 'crypt4gh-archive',
    title: 'Crypt4GH archive mode',
    markdown: lines.join('\n'),
    targetsMet: !ctx.quick && checks.every(Boolean),
  };
}
