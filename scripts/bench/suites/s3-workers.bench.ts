import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { startPrivateRedis } from '../../lib/private-redis';
import { cloneImportDataset, FileSpec, smallFiles, writeImportDataset } from '../data/import-data';
import type { BenchContext } from '../lib/context';
import { cpuMs, RunningProcess, sleep } from '../lib/processes';
import {
  BENCH_WRITE_KEY,
  provisionerEnv,
  startProvisionerApi,
  startWorker,
} from '../lib/provisioner-process';
import { fmt, median, SuiteReport, table, verdict } from '../lib/report';
import { roundOrder } from '../lib/rounds';
import { ensurePeers, postImport, settle, toolVersion, warm } from './imports.bench';
import { ACCESS_KEY, SECRET, startSwift } from './s3-imports.bench';

const MiB = 1024 ** 2;
const WORKER_COUNTS = [1, 2, 4];
const RCLONE_LABEL = 'rclone copy (one run, default transfers)';

/** A typical small dataset: one 8 MiB file of reads and 50 files of 16 KiB. */
const DATASET: FileSpec[] = [{ path: 'reads.bin', size: 8 * MiB }, ...smallFiles(50, 16 * 1024)];
const DATASET_BYTES = DATASET.reduce((sum, f) => sum + f.size, 0);

/** The machine's CPU time so far, busy and in all (from /proc/stat, in clock ticks). */
function machineCpu(): { busy: number; total: number } {
  const [user, nice, system, idle, iowait, ...rest] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const total = user + nice + system + idle + iowait + rest.reduce((sum, x) => sum + x, 0);
  return { busy: total - idle - iowait, total };
}

/** Share of the machine's CPU time that was busy since `before` (other engineers' work too). */
function busySince(before: { busy: number; total: number }): number {
  const now = machineCpu();
  return (now.busy - before.busy) / Math.max(1, now.total - before.total);
}

interface Round {
  label: string;
  workers: number;
  imports: number;
  ms: number;
  ownCpu: number;
  swiftCpu: number;
  proxyCpu: number;
  /** Share of the whole machine's CPU time that was busy during the round. */
  machineBusy: number;
  load: number;
}

/** Waits until `count` more imports than `before` say `imported` (one listing request a poll). */
async function awaitImportedCount(apiUrl: string, before: number, count: number): Promise<void> {
  const deadline = Date.now() + 900_000;
  for (;;) {
    const res = await fetch(`${apiUrl}/imports?state=imported&per_page=1`, {
      headers: { 'X-API-Key': BENCH_WRITE_KEY },
    });
    const done = ((await res.json()) as { count: number }).count - before;
    if (done >= count) return;
    const failed = await fetch(`${apiUrl}/imports?state=failed&per_page=1`, {
      headers: { 'X-API-Key': BENCH_WRITE_KEY },
    }).then(async (r) => ((await r.json()) as { count: number }).count);
    if (failed > 0) throw new Error(`${failed} import(s) failed`);
    if (Date.now() > deadline)
      throw new Error(`only ${done} of ${count} imports done after 15 min`);
    await sleep(250);
  }
}

/**
 * Imports per minute into S3 with 1, 2 and 4 worker processes (IMPORT_CONCURRENCY 2 each) on one
 * queue, against `rclone copy` of the same datasets in the same run, and where the time goes:
 * the workers' CPU, Swift's, and Swift's proxy (one process, so one core at most).
 */
export async function s3WorkersBench(ctx: BenchContext): Promise<SuiteReport> {
  ensurePeers(ctx.log);
  const base = join(ctx.tempDir, 's3-workers');
  const dropzone = join(base, 'dropzone');
  const perRound = ctx.quick ? 6 : Number(process.env.BENCH_S3_WORKER_IMPORTS ?? 30);
  // Interleaved rounds, the order rotated each round: the machine's load drifts (it is shared).
  const roundCount = ctx.quick ? 1 : Number(process.env.BENCH_S3_WORKER_ROUNDS ?? 2);
  const sideNames = [...WORKER_COUNTS.map((n) => `W${n}`), 'RCLONE'];
  const datasetId = (side: string, round: number, i: number) =>
    `${side}-R${round}-${String(i).padStart(3, '0')}`;
  writeImportDataset(dropzone, 'TPL', DATASET);
  for (let round = 0; round < roundCount; round++)
    for (const side of sideNames)
      for (let i = 0; i < perRound; i++)
        cloneImportDataset(dropzone, 'TPL', datasetId(side, round, i));
  ctx.log(`${roundCount * sideNames.length * perRound} datasets written`);

  const swift = await startSwift(join(base, 'swift'));
  const redis = await startPrivateRedis({ dir: join(base, 'redis') });
  const rounds: Round[] = [];
  let api: (RunningProcess & { url: string }) | undefined;
  try {
    const bucket = 'bench-workers';
    await swift.client.send(new CreateBucketCommand({ Bucket: bucket }));
    const env = provisionerEnv({
      redisUrl: redis.url,
      dropzone,
      storage: join(base, 'storage'),
      extra: {
        STORAGE_BACKEND: 's3',
        S3_ENDPOINT: swift.endpoint,
        S3_REGION: 'us-east-1',
        S3_BUCKET: bucket,
        S3_FORCE_PATH_STYLE: 'true',
        S3_ACCESS_KEY_ID: ACCESS_KEY,
        S3_SECRET_ACCESS_KEY: SECRET,
      },
    });
    api = await startProvisionerApi(env);
    const apiUrl = api.url;
    const conf = join(base, 'rclone.conf');
    writeFileSync(
      conf,
      `[swift]\ntype = s3\nprovider = Other\nendpoint = ${swift.endpoint}\naccess_key_id = ${ACCESS_KEY}\nsecret_access_key = ${SECRET}\nregion = us-east-1\nforce_path_style = true\n`,
    );
    const rcloneEnv = { ...process.env };
    delete rcloneEnv.AWS_CA_BUNDLE;
    let imported = 0;
    /** One side of a round, measured from its start to its last dataset stored. */
    const measure = async (
      label: string,
      workers: number,
      work: () => Promise<number[]>,
      after: () => Promise<void>,
    ) => {
      warm(join(dropzone, 'datasets'));
      await settle();
      const [swift0, proxy0, load, machine0] = [
        swift.cpu(),
        swift.proxyCpu(),
        loadavg()[0],
        machineCpu(),
      ];
      const t0 = performance.now();
      const ownCpu = await work();
      const ms = performance.now() - t0;
      rounds.push({
        label,
        workers,
        imports: perRound,
        ms,
        ownCpu: ownCpu.length ? ownCpu.reduce((sum, x) => sum + x, 0) : NaN,
        swiftCpu: swift.cpu() - swift0,
        proxyCpu: swift.proxyCpu() - proxy0,
        machineBusy: busySince(machine0),
        load,
      });
      ctx.log(`${label}: ${perRound} datasets in ${fmt(ms / 1000, 1)} s`);
      await after();
    };
    const sides = sideNames.map((name) => {
      const workers = name === 'RCLONE' ? 0 : Number(name.slice(1));
      return async (round: number) => {
        if (workers === 0)
          return measure(
            RCLONE_LABEL,
            0,
            async () => {
              const copy = spawnSync(
                'rclone',
                ['copy', '-q', '--config', conf, '--include', `RCLONE-R${round}-*/**`].concat([
                  join(dropzone, 'datasets'),
                  `swift:${bucket}/rclone`,
                ]),
                { encoding: 'utf8', env: rcloneEnv },
              );
              if (copy.status !== 0) throw new Error(`rclone copy failed: ${copy.stderr}`);
              return [];
            },
            () => Promise.resolve(),
          );
        const started: RunningProcess[] = [];
        for (let i = 0; i < workers; i++)
          started.push(
            await startWorker({ ...env, TMPDIR: join(base, `scratch-${round}-${workers}-${i}`) }),
          );
        const cpu = () => started.map((w) => cpuMs(w.child.pid!));
        return measure(
          `import, ${workers} worker${workers > 1 ? 's' : ''}`,
          workers,
          async () => {
            const before = cpu();
            for (let i = 0; i < perRound; i++) await postImport(apiUrl, datasetId(name, round, i));
            await awaitImportedCount(apiUrl, imported, perRound);
            imported += perRound;
            return cpu().map((x, i) => x - before[i]);
          },
          async () => {
            for (const w of started) await w.stop();
          },
        );
      };
    });
    for (let round = 0; round < roundCount; round++)
      for (const side of roundOrder(sides, round)) await side(round);
  } finally {
    await api?.stop().catch(() => undefined);
    await redis.stop();
    swift.client.destroy();
    swift.stop();
  }
  return report(ctx, rounds, roundCount);
}

function report(ctx: BenchContext, rounds: Round[], roundCount: number): SuiteReport {
  const perMinute = (r: Round) => r.imports / (r.ms / 60_000);
  const labels = [...new Set(rounds.map((r) => r.label))].sort(
    (a, b) =>
      (rounds.find((r) => r.label === a)!.workers || 99) -
      (rounds.find((r) => r.label === b)!.workers || 99),
  );
  const of = (label: string) => rounds.filter((r) => r.label === label);
  const rate = (label: string) => median(of(label).map(perMinute));
  const share = (label: string, pick: (r: Round) => number) =>
    median(of(label).map((r) => pick(r) / r.ms));
  const one = rate('import, 1 worker');
  const four = rate('import, 4 workers');
  const rclone = rate(RCLONE_LABEL);
  const saturated = (label: string) => {
    const rs = of(label);
    if (share(label, (r) => r.proxyCpu) >= 0.85) return "Swift's proxy (one core)";
    if (share(label, (r) => r.ownCpu + r.swiftCpu) >= 0.85 * availableParallelism())
      return 'the CPUs (ours)';
    if (median(rs.map((r) => r.machineBusy)) >= 0.9) return "the CPUs (the machine's, shared)";
    return 'neither (waits: requests, flushes)';
  };
  const rows = labels.map((label) => {
    const rs = of(label);
    const workers = rs[0].workers;
    return [
      label,
      rs.map((r) => fmt(perMinute(r), 1)).join(', '),
      `**${fmt(rate(label), 1)}**`,
      workers ? fmt(rate(label) / one, 2) : '–',
      workers
        ? fmt(
            share(label, (r) => r.ownCpu),
            2,
          )
        : '–',
      fmt(
        share(label, (r) => r.swiftCpu),
        2,
      ),
      fmt(
        share(label, (r) => r.proxyCpu),
        2,
      ),
      `${fmt(median(rs.map((r) => r.machineBusy)) * 100, 0)} %`,
      workers ? saturated(label) : '–',
      rs.map((r) => fmt(r.load, 1)).join(', '),
    ];
  });
  const scalesUp = four >= one;
  const lines = [
    '## Imports per minute into S3 with 1, 2 and 4 workers',
    '',
    `The built provisioner API and 1, 2 or 4 worker processes (each \`IMPORT_CONCURRENCY=2\`, its own`,
    'scratch directory) on one queue (a private Redis), importing into a private Swift 2.30 with s3api',
    `(\`scripts/s3/swift-s3-server.sh\`: one proxy process). Each side of a round queues ${rounds[0]?.imports ?? 0} new datasets of`,
    `${fmt(DATASET_BYTES / MiB, 1)} MiB (one 8 MiB file and 50 of 16 KiB; pseudo-random bytes) and ends when the last says`,
    '`imported` (SHA-256 of every byte, Content-MD5 on every request, each object confirmed, the commit',
    `object last). Peer: one \`rclone copy\` of as many such datasets into the same server (${toolVersion('rclone', ['version'])},`,
    `default transfers; MD5 of each upload checked). ${roundCount} interleaved round(s) (\`BENCH_S3_WORKER_ROUNDS\`), the order`,
    'rotated each round; medians. CPU / wall: the workers summed; Swift all its processes, and its proxy',
    'alone; machine CPU busy: every process of the machine (/proc/stat). "Saturated": the proxy at',
    "≥ 85 % of its core, our processes at ≥ 85 % of the cores, or the machine's",
    `${availableParallelism()} cores ≥ 90 % busy (it is shared with other engineers' work), else neither.${ctx.quick ? ' **Quick mode: not a real figure.**' : ''}`,
    '',
    table(
      [
        'side',
        'per minute, each round',
        'median per minute',
        '× 1 worker',
        'workers CPU / wall',
        'Swift CPU / wall',
        'Swift proxy CPU / wall',
        'machine CPU busy',
        'saturated',
        'load before',
      ],
      rows,
    ),
    '',
    `Four workers against one: **${fmt(four / one, 2)}×** (target: more workers never slower, ≥ 1×: ${verdict(scalesUp)}); ` +
      `four workers against rclone's rate: ${fmt(four / rclone, 2)}×.`,
  ];
  return {
    name: 's3-workers',
    title: 'Imports into S3 by 1, 2 and 4 workers',
    markdown: lines.join('\n'),
    targetsMet: scalesUp,
  };
}
