import {
  CopyObjectCommand,
  CreateBucketCommand,
  GetObjectCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { randomFillSync } from 'node:crypto';
import { InboxBucket } from '../../../apps/provisioner/src/sources/s3-inbox/inbox-bucket';
import { DEFAULT_RANGED_READS } from '../../../apps/provisioner/src/sources/s3-inbox/ranged-read';
import { mapLimit } from '../../../apps/provisioner/src/common/map-limit';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { cpuMs } from '../lib/processes';
import {
  cloneImportDataset,
  type FileSpec,
  mixedDataset,
  smallFiles,
  writeImportDataset,
} from '../data/import-data';
import type { BenchContext } from '../lib/context';
import { fmt, median, type SuiteReport, table, verdict } from '../lib/report';
import { roundOrder } from '../lib/rounds';
import {
  ensurePeers,
  settle,
  startSetup,
  timeImport,
  toolVersion,
  type Setup,
} from './imports.bench';
import { ACCESS_KEY, SECRET, startSwift, writeRcloneConf } from './s3-imports.bench';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const INBOX = 'inbox';
/**
 * rclone's default `--s3-upload-cutoff`: a deposit at least this large is uploaded by rclone as a
 * multipart upload (an SLO in Swift, a multipart ETag), as a submitter's client would; the smaller
 * ones are single objects, stored by the server's `ingest` in seconds.
 */
const MULTIPART_FROM = 200 * MiB;
const STORE = 'store';

interface InboxCase {
  key: string;
  name: string;
  files: FileSpec[];
}

/** One side of a round: a copy from the inbox, timed. */
interface Side {
  label: string;
  run(c: InboxCase, round: number): Promise<number>;
}

/**
 * Imports from an S3 inbox (SOURCES type s3) on a private Swift, side by side with `rclone copy`
 * from the same inbox: into a filesystem, and into S3 storage on the same Swift, where the import
 * copies server-side (UploadPartCopy/CopyObject, the bytes still read to be hashed) and, with
 * `server_side_copy: false`, downloads and uploads every byte. Issue 60's targets (TARGETS) are
 * checked, each missed one reported with its floor: the store alone on the same dataset
 * (storeFloor), the CPU per file of the store and of each side's client, and for the copy the
 * store's own cost of each way (storeCopyFloor); every figure with the load it was measured under.
 */
export async function s3InboxBench(ctx: BenchContext): Promise<SuiteReport> {
  ensurePeers(ctx.log);
  const base = join(ctx.tempDir, 's3-inbox');
  const local = join(base, 'deposits');
  // Smaller sets to iterate on (the figures of a full run are at the defaults).
  const scale = ctx.quick ? 1 / 16 : Number(process.env.BENCH_S3_INBOX_MIXED_GIB ?? 1);
  const smallCount = ctx.quick ? 1000 : Number(process.env.BENCH_S3_INBOX_SMALL_FILES ?? 10_000);
  const rounds = ctx.quick ? 1 : Number(process.env.BENCH_S3_ROUNDS ?? 3);
  const allCases: InboxCase[] = [
    {
      key: 'MIXED',
      name: `${fmt(scale, 3)} GiB mixed (3 large files + 1,000 small)`,
      files: mixedDataset(Math.round(GiB * scale)),
    },
    {
      key: 'SMALL',
      name: `${smallCount.toLocaleString('en')} small files of 4 KiB`,
      files: smallFiles(smallCount, 4096),
    },
  ];
  // BENCH_S3_INBOX_CASES (MIXED, SMALL) and BENCH_S3_INBOX_SIDES (labels, comma-separated): a
  // part of the section, to iterate on one figure.
  const onlyCases = process.env.BENCH_S3_INBOX_CASES?.split(',');
  const cases = allCases.filter((c) => !onlyCases || onlyCases.includes(c.key));
  // One dataset per round (its own id: each set-up imports an id once), read by every side of
  // the round: the inbox is only read, and each import side has a set-up (queue, storage) of its own.
  const datasetId = (c: InboxCase, round: number) => `${c.key}-${round}`;
  for (const c of cases) {
    writeImportDataset(local, datasetId(c, 0), c.files);
    for (let round = 1; round < rounds; round++)
      cloneImportDataset(local, datasetId(c, 0), datasetId(c, round));
  }
  const swift = await startSwift(join(base, 'swift'));
  const setups: Setup[] = [];
  const results = new Map<string, Map<string, number[]>>();
  /** The store's CPU (all Swift processes) per side of a case, summed over the rounds. */
  const storeCpu = new Map<string, Map<string, number>>();
  /** The client's CPU per side of a case (the import's worker, rclone), summed over the rounds. */
  const clientCpu = new Map<string, Map<string, number>>();
  const floors = new Map<string, StoreFloor>();
  let copyFloor: CopyFloor | null = null;
  const loads: number[] = [];
  try {
    for (const bucket of [INBOX, STORE])
      await swift.client.send(new CreateBucketCommand({ Bucket: bucket }));
    const rcloneConf = join(base, 'rclone.conf');
    /** The CPU of the client of the side run last (rclone, or the import's worker). */
    let lastClientCpu = 0;
    const rcloneEnv = writeRcloneConf(rcloneConf, swift.endpoint);
    const rclone = (args: string[]) => {
      lastClientCpu = cpuMs('self');
      const started = performance.now();
      const run = spawnSync('rclone', ['copy', '-q', '--config', rcloneConf, ...args], {
        encoding: 'utf8',
        env: rcloneEnv,
      });
      if (run.status !== 0) throw new Error(`rclone copy failed: ${run.stderr}`);
      const ms = performance.now() - started;
      // The waited-for children's CPU (rclone's own, all its threads).
      lastClientCpu = cpuMs('self') - lastClientCpu;
      return ms;
    };
    // The submitters' deposits, uploaded into the inbox once (untimed): the large files by rclone
    // (multipart), the others ingested.
    const uploadStarted = performance.now();
    rclone([
      '--transfers',
      '16',
      '--min-size',
      `${MULTIPART_FROM / MiB}Mi`,
      local,
      `swift:${INBOX}/deposits`,
    ]);
    swift.ingest(INBOX, 'deposits/', local, MULTIPART_FROM);
    ctx.log(
      `S3 inbox: deposits uploaded in ${fmt((performance.now() - uploadStarted) / 1000, 1)} s`,
    );

    // The workers' ranged reads of large objects (S3_INBOX_RANGES, S3_INBOX_RANGE_BYTES): their
    // defaults unless BENCH_S3_INBOX_RANGES / BENCH_S3_INBOX_RANGE_BYTES set them (1: one GET each).
    const reads: Record<string, string> = {};
    if (process.env.BENCH_S3_INBOX_RANGES)
      reads.S3_INBOX_RANGES = process.env.BENCH_S3_INBOX_RANGES;
    if (process.env.BENCH_S3_INBOX_RANGE_BYTES)
      reads.S3_INBOX_RANGE_BYTES = process.env.BENCH_S3_INBOX_RANGE_BYTES;
    const inboxSource = (extra: Record<string, unknown> = {}) =>
      JSON.stringify([
        {
          name: 'inbox',
          type: 's3',
          endpoint: swift.endpoint,
          bucket: INBOX,
          prefix: 'deposits/',
          force_path_style: true,
          access_key_id: ACCESS_KEY,
          secret_access_key: SECRET,
          ...extra,
        },
      ]);
    const s3Storage = (prefix: string) => ({
      STORAGE_BACKEND: 's3',
      S3_ENDPOINT: swift.endpoint,
      S3_REGION: 'us-east-1',
      S3_BUCKET: STORE,
      S3_PREFIX: prefix,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: ACCESS_KEY,
      S3_SECRET_ACCESS_KEY: SECRET,
    });
    const intoFs = await startSetup('redis', join(base, 'fs'), local, {
      SOURCES: inboxSource(),
      ...reads,
    });
    setups.push(intoFs);
    const serverSide = await startSetup('redis', join(base, 'ssc'), local, {
      SOURCES: inboxSource(),
      ...reads,
      ...s3Storage('ssc/'),
    });
    setups.push(serverSide);
    const downUp = await startSetup('redis', join(base, 'dlul'), local, {
      SOURCES: inboxSource({ server_side_copy: false }),
      ...reads,
      ...s3Storage('dlul/'),
    });
    setups.push(downUp);
    const rcloneTarget = join(base, 'rclone-target');
    mkdirSync(rcloneTarget, { recursive: true });
    const payload = (c: InboxCase, r: number) =>
      `swift:${INBOX}/deposits/datasets/${datasetId(c, r)}/payload`;
    const allSides: Side[] = [
      {
        label: 'import into filesystem',
        run: (c, r) => timed(intoFs, datasetId(c, r)),
      },
      {
        label: 'rclone copy into filesystem',
        // Then `sync -f`, timed, as the drop-zone bench times its peers (timeTool): the import's
        // time includes making its files durable (its records' and flush step's syncfs).
        run: async (c, r) => {
          const started = performance.now();
          rclone([payload(c, r), join(rcloneTarget, `${c.key}-${r}`)]);
          const sync = spawnSync('sync', ['-f', rcloneTarget]);
          if (sync.status !== 0) throw new Error(`sync -f failed: ${String(sync.stderr)}`);
          return performance.now() - started;
        },
      },
      {
        label: 'import into S3, server-side copy',
        run: (c, r) => timed(serverSide, datasetId(c, r)),
      },
      {
        label: 'import into S3, download and upload',
        run: (c, r) => timed(downUp, datasetId(c, r)),
      },
      {
        // rclone copies server-side itself within one remote (its default).
        label: 'rclone copy into S3 (same store)',
        run: async (c, r) => rclone([payload(c, r), `swift:${STORE}/rclone/${c.key}-${r}`]),
      },
    ];
    // An import timed, its worker's CPU and step times logged (where an import spends its time).
    const timed = async (setup: Setup, id: string) => {
      const cpuBefore = cpuMs(setup.worker.child.pid!);
      const apiBefore = cpuMs(setup.api.child.pid!);
      const { ms, id: importId } = await timeImport(setup.apiUrl, id, 'inbox', IMPORT_POLL_MS);
      lastClientCpu = cpuMs(setup.worker.child.pid!) - cpuBefore;
      ctx.log(
        `S3 inbox ${id}: ${fmt(ms, 0)} ms, worker CPU ${fmt(lastClientCpu, 0)} ms, API CPU ${fmt(cpuMs(setup.api.child.pid!) - apiBefore, 0)} ms, steps ${setup.steps.get(importId) ?? '?'}`,
      );
      return ms;
    };
    const onlySides = process.env.BENCH_S3_INBOX_SIDES?.split(',');
    const sides = allSides.filter((s) => !onlySides || onlySides.includes(s.label));
    for (const c of cases) {
      const byside = new Map(sides.map((s) => [s.label, [] as number[]]));
      results.set(c.name, byside);
      const cpuBySide = new Map(sides.map((s) => [s.label, 0]));
      storeCpu.set(c.name, cpuBySide);
      const clientBySide = new Map(sides.map((s) => [s.label, 0]));
      clientCpu.set(c.name, clientBySide);
      for (let round = 0; round < rounds; round++) {
        loads.push(loadavg()[0]);
        for (const side of roundOrder(sides, round)) {
          await settle();
          const cpuBefore = swift.cpu();
          byside.get(side.label)!.push(await side.run(c, round));
          cpuBySide.set(side.label, cpuBySide.get(side.label)! + swift.cpu() - cpuBefore);
          clientBySide.set(side.label, clientBySide.get(side.label)! + lastClientCpu);
        }
        ctx.log(
          `S3 inbox ${c.name}, round ${round + 1}: ${sides.map((s) => `${s.label} ${fmt(byside.get(s.label)![round], 0)} ms`).join(', ')}`,
        );
      }
    }
    // The store alone for each case's dataset, after its rounds (the same page cache).
    for (const c of cases) {
      const floor = await storeFloor(swift, c, datasetId(c, 0));
      floors.set(c.name, floor);
      ctx.log(
        `S3 inbox ${c.name}: the store alone ${fmt(floor.ms, 0)} ms, ${fmt(floor.storeCpuMs / c.files.length, 2)} ms of its CPU a file`,
      );
    }
    if (sides.some((s) => s.label.includes('server-side'))) {
      copyFloor = await storeCopyFloor(swift, ctx.quick ? 32 * MiB : COPY_FLOOR_BYTES);
      ctx.log(
        `S3 inbox: the store alone, one object: ${copyFloor.map((f) => `${f.label} ${fmt(f.ms, 0)} ms`).join(', ')}`,
      );
    }
  } finally {
    for (const s of setups) await s.stop().catch(() => undefined);
    swift.client.destroy();
    swift.stop();
  }
  return report(ctx, cases, { results, storeCpu, clientCpu, floors }, copyFloor, rounds, loads);
}

/**
 * The import's record read every this many ms while it runs: its time is the record's own
 * (finished_at), and each answer costs the API CPU on the 2 cores the store and the worker share,
 * which the rclone sides never pay (the log gives the API's CPU of each import).
 */
const IMPORT_POLL_MS = 500;

/** The object of the copy floor: a plain (single-PUT) object, which Swift copies on condition. */
const COPY_FLOOR_BYTES = 256 * MiB;

/** What the store alone gives for one object: each way of moving it, timed, and its CPU. */
type CopyFloor = { label: string; ms: number; storeCpuMs: number }[];

/**
 * The store's own cost of a copy of one plain object, with nothing hashed or written by the
 * client: a GET, a PUT, both at once (what a download-and-upload import asks of it), a
 * CopyObject alone, and a CopyObject with a GET of the source at once (what a server-side
 * import asks: the store copies while the import reads every byte to hash it). On a store whose
 * one proxy moves every byte, the last cannot be faster than the GET and PUT.
 */
async function storeCopyFloor(
  swift: Awaited<ReturnType<typeof startSwift>>,
  bytes: number,
): Promise<CopyFloor> {
  const body = randomFillSync(Buffer.allocUnsafe(bytes));
  const source = { Bucket: INBOX, Key: 'floor/plain' };
  await swift.client.send(new PutObjectCommand({ ...source, Body: body }));
  const get = async () => {
    const answer = await swift.client.send(new GetObjectCommand(source));
    for await (const chunk of answer.Body as AsyncIterable<Uint8Array>) void chunk;
  };
  const put = (key: string) =>
    swift.client.send(new PutObjectCommand({ Bucket: STORE, Key: key, Body: body }));
  const copy = (key: string) =>
    swift.client.send(
      new CopyObjectCommand({ Bucket: STORE, Key: key, CopySource: `${INBOX}/floor/plain` }),
    );
  const ways: { label: string; run: () => Promise<unknown> }[] = [
    { label: 'GET', run: get },
    { label: 'PUT', run: () => put('floor/put') },
    // A download-and-upload import streams: its GET and its PUT run at once.
    { label: 'GET and PUT at once', run: () => Promise.all([get(), put('floor/get-put')]) },
    { label: 'CopyObject', run: () => copy('floor/copy') },
    {
      label: 'CopyObject and a GET at once',
      run: () => Promise.all([copy('floor/copy-get'), get()]),
    },
  ];
  const measured: CopyFloor = [];
  for (const way of ways) {
    await settle();
    const cpuBefore = swift.cpu();
    const started = performance.now();
    await way.run();
    measured.push({
      label: way.label,
      ms: performance.now() - started,
      storeCpuMs: swift.cpu() - cpuBefore,
    });
  }
  return measured;
}

/** Objects in flight for the floor: the import's lanes for a remote dataset (REMOTE_COPY_LANES). */
const FLOOR_IN_FLIGHT = 16;

/** What the store alone answers for a case's objects (see storeFloor). */
interface StoreFloor {
  ms: number;
  /** All Swift processes' CPU for the set. */
  storeCpuMs: number;
  /** The reading client's CPU (this process) for the set. */
  clientCpuMs: number;
}

/**
 * What the store itself answers for a case's dataset, with the least a client can do: the
 * import's own requests (InboxBucket.stream: a hand-signed GET with If-Match below 1 MiB,
 * ranged GETs past two ranges), FLOOR_IN_FLIGHT objects at once, the bytes dropped as they
 * arrive (nothing hashed or written, nothing recorded). No import of the set can beat it: it is
 * the floor a missed target is reported with. The listing that gives the ETags is not timed.
 */
async function storeFloor(
  swift: Awaited<ReturnType<typeof startSwift>>,
  c: InboxCase,
  id: string,
): Promise<StoreFloor> {
  const bucket = new InboxBucket('floor', swift.client, INBOX, `deposits/datasets/${id}/payload/`);
  const objects = [];
  for await (const page of bucket.objects('')) objects.push(...page);
  if (objects.length !== c.files.length)
    throw new Error(`the floor listed ${objects.length} objects of ${c.files.length}`);
  // Largest first, as the import orders them.
  objects.sort((a, b) => b.size - a.size);
  await settle();
  const cpuBefore = swift.cpu();
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  await mapLimit(objects, FLOOR_IN_FLIGHT, async (o) => {
    for await (const chunk of bucket.stream(o.key, o.etag, o.key, o.size)) void chunk;
  });
  const ms = performance.now() - started;
  const client = process.cpuUsage(clientBefore);
  return {
    ms,
    storeCpuMs: swift.cpu() - cpuBefore,
    clientCpuMs: (client.user + client.system) / 1000,
  };
}

/** What the rounds measured, by case name then side label. */
interface Measured {
  results: Map<string, Map<string, number[]>>;
  storeCpu: Map<string, Map<string, number>>;
  clientCpu: Map<string, Map<string, number>>;
  floors: Map<string, StoreFloor>;
}

const FS_IMPORT = 'import into filesystem';
const FS_RCLONE = 'rclone copy into filesystem';
const S3_SERVER_SIDE = 'import into S3, server-side copy';
const S3_DOWN_UP = 'import into S3, download and upload';
const S3_RCLONE = 'rclone copy into S3 (same store)';

/**
 * Issue 60's targets, each a ratio of two sides' medians (`faster` measured against `slower`):
 * the import at least 1.2× rclone from the same inbox, into a filesystem and into S3 (the
 * import's own way there, server-side); the server-side copy at least 1.5× download and upload.
 */
const TARGETS = [
  { name: 'import into filesystem / rclone', slower: FS_RCLONE, faster: FS_IMPORT, min: 1.2 },
  {
    name: 'import into S3 (server-side) / rclone',
    slower: S3_RCLONE,
    faster: S3_SERVER_SIDE,
    min: 1.2,
  },
  {
    name: 'import into S3 (download and upload) / rclone',
    slower: S3_RCLONE,
    faster: S3_DOWN_UP,
    min: null,
  },
  {
    name: 'server-side copy / download and upload',
    slower: S3_DOWN_UP,
    faster: S3_SERVER_SIDE,
    min: 1.5,
  },
];

function report(
  ctx: BenchContext,
  cases: InboxCase[],
  measured: Measured,
  copyFloor: CopyFloor | null,
  rounds: number,
  loads: number[],
): SuiteReport {
  const { results, storeCpu, clientCpu, floors } = measured;
  const lines = [
    '## Imports from an S3 inbox (Swift s3api)',
    '',
    'The built provisioner API and worker importing from an S3 inbox (`SOURCES` entry of type `s3`) on a',
    'private Swift 2.30 with s3api (`scripts/s3/swift-s3-server.sh`), into a filesystem and into S3 storage',
    'on the same Swift: server-side (CopyObject, UploadPartCopy past the part size, every source byte still',
    'read and hashed) and, with `server_side_copy: false`, by download and upload. Import time: from the POST',
    `until the record says \`imported\`. Peer: \`rclone copy\` from the same inbox (${toolVersion('rclone', ['version'])},`,
    'default transfers and checkers; within one remote it copies server-side itself; into a filesystem, then `sync -f`,',
    'timed, as the import makes its files durable before it says `imported`). Every side of a round',
    `copies that round's dataset (each import side into a set-up of its own); ${rounds} round(s), the order rotated each round. ` +
      `The 1-minute load average before each round was ${loads.map((x) => fmt(x, 1)).join(', ')}.${ctx.quick ? ' **Quick mode: not a real figure.**' : ''}`,
    ...(process.env.BENCH_S3_INBOX_SIDES || process.env.BENCH_S3_INBOX_CASES
      ? [
          `This run: only ${[...new Set([...results.values()].flatMap((sides) => [...sides.keys()]))].join(', ')} ` +
            '(`BENCH_S3_INBOX_SIDES`, `BENCH_S3_INBOX_CASES`); the targets of the sides left out are not checked.',
        ]
      : []),
    `The imports read an object of two ranges or more in ranges of ${fmt(Number(process.env.BENCH_S3_INBOX_RANGE_BYTES ?? DEFAULT_RANGED_READS.rangeBytes) / MiB, 0)} MiB, ` +
      `${process.env.BENCH_S3_INBOX_RANGES ?? DEFAULT_RANGED_READS.ranges} GETs in flight per object (\`S3_INBOX_RANGE_BYTES\`, \`S3_INBOX_RANGES\`).`,
    "CPU per file: the store's (all Swift processes) and the client's (the import's worker, listing and records",
    "included; rclone's own process), each averaged over the rounds. The store alone: the same dataset read by",
    `the import's own requests (hand-signed GETs with \`If-Match\`, ranged GETs for large objects), ${FLOOR_IN_FLIGHT} objects at once,`,
    'nothing hashed, written or recorded: the floor of any copy from this inbox, and what a missed target is reported with.',
    '',
  ];
  let met = true;
  for (const c of cases) {
    const bytes = c.files.reduce((sum, f) => sum + f.size, 0);
    const sides = results.get(c.name);
    if (!sides) continue;
    const perFile = (cpu: Map<string, Map<string, number>>, label: string) =>
      fmt((cpu.get(c.name)?.get(label) ?? 0) / rounds / c.files.length, 2);
    const floor = floors.get(c.name);
    lines.push(`### ${c.name} (${fmt(bytes / MiB)} MiB)`, '');
    lines.push(
      table(
        [
          'side',
          'ms per round',
          'median ms',
          'MB/s',
          'store CPU ms per file',
          'client CPU ms per file',
        ],
        [
          ...[...sides.entries()].map(([label, ms]) => [
            label,
            ms.map((x) => fmt(x, 0)).join(', '),
            `**${fmt(median(ms), 0)}**`,
            fmt(bytes / 1e6 / (median(ms) / 1000), 1),
            perFile(storeCpu, label),
            perFile(clientCpu, label),
          ]),
          ...(floor
            ? [
                [
                  'the store alone (floor)',
                  fmt(floor.ms, 0),
                  fmt(floor.ms, 0),
                  fmt(bytes / 1e6 / (floor.ms / 1000), 1),
                  fmt(floor.storeCpuMs / c.files.length, 2),
                  fmt(floor.clientCpuMs / c.files.length, 2),
                ],
              ]
            : []),
        ],
      ),
      '',
    );
    const m = (label: string) => median(sides.get(label) ?? []);
    // The ratios whose two sides ran (BENCH_S3_INBOX_SIDES may leave some out).
    for (const target of TARGETS.filter((t) => sides.has(t.slower) && sides.has(t.faster))) {
      const ratio = m(target.slower) / m(target.faster);
      let line = `- ${target.name}: **${fmt(ratio, 2)}×**`;
      if (target.min === null) {
        lines.push(`${line} (no target of its own).`);
        continue;
      }
      const ok = ratio >= target.min;
      met &&= ok;
      line += `, target ${fmt(target.min, 1)}×: ${verdict(ok)}`;
      if (!ok && target.slower.startsWith('rclone') && floor)
        // The best an import can do is the store alone: rclone's time over that is its ceiling.
        line +=
          `. Floor: the store alone took ${fmt(floor.ms, 0)} ms; an import at ${fmt(target.min, 1)}× would take ` +
          `${fmt(m(target.slower) / target.min, 0)} ms, ${fmt((m(target.slower) / target.min / floor.ms) * 100, 0)} % of the floor ` +
          `(the most any import could reach here: ${fmt(m(target.slower) / floor.ms, 2)}×); the import's worker spent ` +
          `${perFile(clientCpu, target.faster)} ms of CPU a file and the store ${perFile(storeCpu, target.faster)} ms, on 2 cores`;
      if (!ok && target.slower === S3_DOWN_UP && copyFloor)
        line += `. Floor: the store-alone table below (the most a server-side import can gain on this store)`;
      lines.push(`${line}.`);
    }
    lines.push('');
  }
  if (copyFloor) {
    const floorBytes = ctx.quick ? 32 * MiB : COPY_FLOOR_BYTES;
    const ms = (label: string) => copyFloor.find((f) => f.label === label)!.ms;
    lines.push(
      `The store alone for one plain object of ${fmt(floorBytes / MiB, 0)} MiB (one PUT, so Swift copies it on its condition), nothing hashed or written by the client:`,
      '',
      table(
        ['request', 'ms', 'MB/s', 'store CPU ms'],
        copyFloor.map((f) => [
          f.label,
          fmt(f.ms, 0),
          fmt(floorBytes / 1e6 / (f.ms / 1000), 1),
          fmt(f.storeCpuMs, 0),
        ]),
      ),
      '',
      `GET and PUT / CopyObject and the GET that hashes: **${fmt(ms('GET and PUT at once') / ms('CopyObject and a GET at once'), 2)}×**, ` +
        `the most a server-side import can gain over download and upload on this store.`,
      '',
    );
  }
  lines.push(
    `Load average (1, 5, 15 min) when the report was written: ${loadavg()
      .map((x) => fmt(x, 2))
      .join(', ')}.`,
  );
  return {
    name: 's3-inbox',
    title: 'Imports from an S3 inbox',
    markdown: lines.join('\n'),
    targetsMet: met,
  };
}
