import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { freePortBlock } from '../../lib/child-process';
import { createS3Client } from '../../../apps/provisioner/src/common/s3/s3-client';
import {
  cloneImportDataset,
  FileSpec,
  ImportCase,
  importCases,
  writeImportDataset,
} from '../data/import-data';
import type { BenchContext } from '../lib/context';
import { cpuMs, processMemory, ROOT, sleep } from '../lib/processes';
import { fmt, median, SuiteReport, table, verdict } from '../lib/report';
import { roundOrder } from '../lib/rounds';
import {
  awaitImported,
  ensurePeers,
  postImport,
  settle,
  startSetup,
  timeImport,
  toolVersion,
  warm,
  type Setup,
} from './imports.bench';

const MEMORY_TARGET_BYTES = 200e6;
const CONCURRENT_MEMORY_TARGET_BYTES = 300e6;
const CONCURRENT_IMPORTS = 4;
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const SCRIPT = join(ROOT, 'scripts/s3/swift-s3-server.sh');
export const ACCESS_KEY = 'test:tester';
export const SECRET = 'testing';
/** The ceiling's multipart settings: the provisioner's part size, and eight requests in flight. */
const PART_BYTES = 8 * MiB;
/** The worker's S3 copy lanes (S3_COPY_LANES). */
export const CEILING_CONCURRENCY = 8;
/**
 * A round counts only when the machine is quiet as it starts: the 1-minute load average at most
 * BENCH_QUIET_LOAD (2). Before each round the bench waits up to BENCH_QUIET_WAIT_S (300 s) for
 * it (the last round's own load decays too); a round started above it is marked and left out of
 * the figure, which then stands on the quiet rounds alone.
 */
const QUIET_LOAD = Number(process.env.BENCH_QUIET_LOAD ?? 2);
const QUIET_WAIT_MS = Number(process.env.BENCH_QUIET_WAIT_S ?? 300) * 1000;
/** Targets against rclone copy and the bare upload, per dataset. */
const VS_RCLONE_TARGET = 1.2;
const OF_CEILING_TARGET = 0.85;

/** The provisioner's settings for S3 storage in `bucket` of the bench's Swift server. */
export function swiftStorageEnv(endpoint: string, bucket: string): NodeJS.ProcessEnv {
  return {
    STORAGE_BACKEND: 's3',
    S3_ENDPOINT: endpoint,
    S3_REGION: 'us-east-1',
    S3_BUCKET: bucket,
    S3_PREFIX: 'provisioner/',
    S3_FORCE_PATH_STYLE: 'true',
    S3_ACCESS_KEY_ID: ACCESS_KEY,
    S3_SECRET_ACCESS_KEY: SECRET,
  };
}
/**
 * rclone's S3 remote `swift` for the private Swift, in a config file of its own; returns the
 * environment to run rclone in. Without AWS_CA_BUNDLE: rclone's AWS SDK then wants a transport of
 * its own and fails with "unsupported transport, *fshttp.Transport"; the endpoint is plain HTTP
 * on loopback anyway.
 */
export function writeRcloneConf(path: string, endpoint: string): NodeJS.ProcessEnv {
  writeFileSync(
    path,
    [
      '[swift]',
      'type = s3',
      'provider = Other',
      `endpoint = ${endpoint}`,
      `access_key_id = ${ACCESS_KEY}`,
      `secret_access_key = ${SECRET}`,
      'region = us-east-1',
      'force_path_style = true',
      '',
    ].join('\n'),
  );
  const env = { ...process.env };
  delete env.AWS_CA_BUNDLE;
  return env;
}

/** A private Swift (scripts/s3/swift-s3-server.sh with its own directory and ports). */
export interface Swift {
  endpoint: string;
  client: S3Client;
  /** CPU ms of all its processes (proxy, object/container/account servers, memcached). */
  cpu(): number;
  /** CPU ms of its proxy alone (one process: one core at most). */
  proxyCpu(): number;
  /**
   * Stores each file under `dir` (below `belowBytes`, when given) as the object `keyPrefix` + its
   * path in `bucket`, written on disk by Swift's own code (the script's `ingest`): an untimed
   * set-up of many objects in seconds instead of minutes.
   */
  ingest(bucket: string, keyPrefix: string, dir: string, belowBytes?: number): void;
  stop(): void;
}

/** A client of an S3 server on this machine, with the bench's test credentials. */
export function localS3Client(endpoint: string): S3Client {
  return createS3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET },
  });
}

export async function startSwift(dir: string): Promise<Swift> {
  const port = await freePortBlock(5);
  const env = { ...process.env, S3_SERVER_DIR: dir, S3_SERVER_PORT: String(port) };
  execFileSync('bash', [SCRIPT, 'start'], { env, stdio: 'inherit', timeout: 300_000 });
  const endpoint = `http://127.0.0.1:${port}`;
  const pid = (name: string) => Number(readFileSync(join(dir, 'run', `${name}.pid`), 'utf8'));
  const names = ['proxy', 'object', 'container', 'account', 'memcached'];
  return {
    endpoint,
    client: localS3Client(endpoint),
    cpu: () => names.reduce((sum, name) => sum + cpuMs(pid(name)), 0),
    proxyCpu: () => cpuMs(pid('proxy')),
    ingest: (bucket, keyPrefix, dir, belowBytes) =>
      execFileSync(
        'bash',
        [SCRIPT, 'ingest', bucket, keyPrefix, dir, ...(belowBytes ? [String(belowBytes)] : [])],
        { env, stdio: 'inherit' },
      ),
    stop: () => execFileSync('bash', [SCRIPT, 'reset'], { env, stdio: 'inherit' }),
  };
}

/**
 * The server's own throughput for these bytes: every file PUT as it is (small ones) or as a bare
 * multipart upload (PART_BYTES parts, CEILING_CONCURRENCY requests in flight), no hashing, no
 * Content-MD5, no manifest: what any client's upload of the dataset costs Swift.
 */
export async function bareUpload(
  client: S3Client,
  bucket: string,
  prefix: string,
  source: string,
  files: FileSpec[],
): Promise<void> {
  const tasks: (() => Promise<unknown>)[] = [];
  for (const file of files) {
    const path = join(source, file.path);
    const key = `${prefix}/${file.path}`;
    if (file.size <= PART_BYTES) {
      tasks.push(() =>
        client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: readFileSync(path) })),
      );
      continue;
    }
    // A large file's parts go through the same pool; it completes when its last part is in.
    const parts = Math.ceil(file.size / PART_BYTES);
    let upload: Promise<string> | undefined;
    const uploadId = () =>
      (upload ??= client
        .send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }))
        .then((r) => r.UploadId!));
    const etags: string[] = new Array(parts);
    let left = parts;
    for (let n = 0; n < parts; n++)
      tasks.push(async () => {
        const size = Math.min(PART_BYTES, file.size - n * PART_BYTES);
        const body = Buffer.allocUnsafe(size);
        const fd = openSync(path, 'r');
        try {
          readSync(fd, body, 0, size, n * PART_BYTES);
        } finally {
          closeSync(fd);
        }
        const id = await uploadId();
        const part = await client.send(
          new UploadPartCommand({
            Bucket: bucket,
            Key: key,
            UploadId: id,
            PartNumber: n + 1,
            Body: body,
          }),
        );
        etags[n] = part.ETag!;
        if (--left === 0)
          await client.send(
            new CompleteMultipartUploadCommand({
              Bucket: bucket,
              Key: key,
              UploadId: id,
              MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) },
            }),
          );
      });
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: CEILING_CONCURRENCY }, async () => {
      while (next < tasks.length) await tasks[next++]();
    }),
  );
}

type S3Case = ImportCase;

interface Measured {
  ms: number[];
  cpu: number[];
  swiftCpu: number[];
  proxyCpu: number[];
}

interface S3CaseResult {
  c: S3Case;
  bytes: number;
  sides: Map<string, Measured>;
  loadBefore: number[];
}

/** The 1-minute load average once it is at most QUIET_LOAD, or when QUIET_WAIT_MS has passed. */
async function quietLoad(log: (message: string) => void): Promise<number> {
  const deadline = Date.now() + QUIET_WAIT_MS;
  let load = loadavg()[0];
  if (load > QUIET_LOAD) log(`S3: load average ${fmt(load, 2)}, waiting for ${QUIET_LOAD} or less`);
  while (load > QUIET_LOAD && Date.now() < deadline) {
    await sleep(5000);
    load = loadavg()[0];
  }
  return load;
}

/** The rounds a figure stands on: the quiet ones, or every round when none was quiet. */
function quietRounds(loadBefore: number[]): number[] {
  const quiet = loadBefore.flatMap((load, i) => (load <= QUIET_LOAD ? [i] : []));
  return quiet.length > 0 ? quiet : loadBefore.map((_, i) => i);
}

const IMPORT = 'import (S3 backend)';
const RCLONE = 'rclone copy';
const CEILING = 'bare multipart upload (SDK)';

export async function s3ImportsBench(ctx: BenchContext): Promise<SuiteReport> {
  ensurePeers(ctx.log);
  const base = join(ctx.tempDir, 's3-imports');
  const dropzone = join(base, 'dropzone');
  // Three (BENCH_S3_ROUNDS): each round writes every dataset into Swift three times, and one
  // round of 10,000 small files takes minutes on a shared 2-core machine.
  const rounds = ctx.quick ? 1 : Number(process.env.BENCH_S3_ROUNDS ?? 3);
  const cases: S3Case[] = importCases(ctx.quick);
  const memoryBytes = ctx.quick ? 256 * MiB : 2 * GiB;
  for (const c of cases) {
    writeImportDataset(dropzone, c.key, c.files);
    for (let round = 0; round < rounds; round++)
      cloneImportDataset(dropzone, c.key, `${c.key}-S${round}`);
  }
  for (let i = 1; i <= CONCURRENT_IMPORTS; i++)
    cloneImportDataset(dropzone, 'MIXED', `MIXED-SC${i}`);
  writeImportDataset(dropzone, 'HUGE', [{ path: 'one-big-file.bin', size: memoryBytes }], true);
  ctx.log('datasets written');

  const swift = await startSwift(join(base, 'swift'));
  const bucket = 'bench';
  const setups: Setup[] = [];
  const results: S3CaseResult[] = [];
  let memory: { before: number; after: number } | undefined;
  let concurrent: { peak: number; ms: number } | undefined;
  try {
    await swift.client.send(new CreateBucketCommand({ Bucket: bucket }));
    // rclone's S3 remote in a config file of its own; rclone verifies each upload's MD5 against
    // the server's answer.
    const rcloneConf = join(base, 'rclone.conf');
    const rcloneEnv = writeRcloneConf(rcloneConf, swift.endpoint);
    const s3Env = swiftStorageEnv(swift.endpoint, bucket);
    // Memory first (it is the figure with a hard limit): a fresh worker's whole life's peak on
    // one 2 GiB file into S3, then four imports at once on a worker allowed to run four.
    const lone = await startSetup('redis', base, dropzone, s3Env);
    setups.push(lone);
    const pid = lone.worker.child.pid!;
    const before = processMemory(pid, 'VmHWM');
    await timeImport(lone.apiUrl, 'HUGE');
    memory = { before, after: processMemory(pid, 'VmHWM') };
    ctx.log(
      `S3 worker peak RSS ${fmt(memory.after / MiB)} MiB (before the 2 GiB import ${fmt(before / MiB)} MiB)`,
    );
    for (const s of setups.splice(0)) await s.stop();

    const busy = await startSetup('redis', base, dropzone, {
      ...s3Env,
      IMPORT_CONCURRENCY: String(CONCURRENT_IMPORTS),
    });
    setups.push(busy);
    const started = performance.now();
    const ids = await Promise.all(
      Array.from({ length: CONCURRENT_IMPORTS }, (_, i) =>
        postImport(busy.apiUrl, `MIXED-SC${i + 1}`),
      ),
    );
    await Promise.all(ids.map((id) => awaitImported(busy.apiUrl, id)));
    concurrent = {
      peak: processMemory(busy.worker.child.pid!, 'VmHWM'),
      ms: performance.now() - started,
    };
    ctx.log(
      `S3 worker peak RSS with ${CONCURRENT_IMPORTS} imports at once ${fmt(concurrent.peak / MiB)} MiB`,
    );
    for (const s of setups.splice(0)) await s.stop();

    const setup = await startSetup('redis', base, dropzone, s3Env);
    setups.push(setup);
    for (const c of cases) {
      const source = join(dropzone, 'datasets', c.key, 'payload');
      const result: S3CaseResult = {
        c,
        bytes: c.files.reduce((sum, f) => sum + f.size, 0),
        sides: new Map(),
        loadBefore: [],
      };
      const sides: { label: string; run(round: number): Promise<number>; cpu(): number }[] = [
        {
          label: IMPORT,
          run: async (round) => (await timeImport(setup.apiUrl, `${c.key}-S${round}`)).ms,
          cpu: () => cpuMs(setup.worker.child.pid!),
        },
        {
          label: RCLONE,
          // As a new user runs it: default transfers and checkers, each upload's MD5 checked.
          run: async (round) => {
            const started = performance.now();
            const copy = spawnSync(
              'rclone',
              [
                'copy',
                '-q',
                '--config',
                rcloneConf,
                source,
                `swift:${bucket}/rclone/${c.key}-${round}`,
              ],
              { encoding: 'utf8', env: rcloneEnv },
            );
            if (copy.status !== 0) throw new Error(`rclone copy failed: ${copy.stderr}`);
            return performance.now() - started;
          },
          cpu: () => cpuMs('self'),
        },
        {
          label: CEILING,
          run: async (round) => {
            const started = performance.now();
            await bareUpload(swift.client, bucket, `bare/${c.key}-${round}`, source, c.files);
            return performance.now() - started;
          },
          cpu: () => {
            const usage = process.cpuUsage();
            return (usage.user + usage.system) / 1000;
          },
        },
      ];
      for (const side of sides)
        result.sides.set(side.label, { ms: [], cpu: [], swiftCpu: [], proxyCpu: [] });
      for (let round = 0; round < rounds; round++) {
        result.loadBefore.push(await quietLoad(ctx.log));
        for (const side of roundOrder(sides, round)) {
          warm(source);
          await settle();
          const m = result.sides.get(side.label)!;
          const [cpu0, swift0, proxy0] = [side.cpu(), swift.cpu(), swift.proxyCpu()];
          m.ms.push(await side.run(round));
          m.cpu.push(side.cpu() - cpu0);
          m.swiftCpu.push(swift.cpu() - swift0);
          m.proxyCpu.push(swift.proxyCpu() - proxy0);
        }
        ctx.log(
          `S3 ${c.name}, round ${round + 1}: ${sides.map((s) => `${s.label} ${fmt(result.sides.get(s.label)!.ms[round], 0)} ms`).join(', ')}`,
        );
      }
      results.push(result);
    }
  } finally {
    for (const s of setups) await s.stop().catch(() => undefined);
    swift.client.destroy();
    swift.stop();
  }
  return report(ctx, results, rounds, memoryBytes, memory, concurrent);
}

function report(
  ctx: BenchContext,
  results: S3CaseResult[],
  rounds: number,
  memoryBytes: number,
  memory: { before: number; after: number } | undefined,
  concurrent: { peak: number; ms: number } | undefined,
): SuiteReport {
  const checks: boolean[] = [];
  const lines: string[] = [
    '## Imports into S3 (Swift s3api)',
    '',
    'The built provisioner API and worker (queue on Redis) with `STORAGE_BACKEND=s3` and the shipped',
    'S3 settings (S3_PART_BYTES 8 MiB, S3_UPLOAD_CONCURRENCY 4: a pool of 32 MiB of part buffers per worker),',
    'importing into a private Swift 2.30 with s3api (`scripts/s3/swift-s3-server.sh`: one proxy process, one',
    'object server, one replica, on the same disk). Import time: from the POST until the record says',
    '`imported` (SHA-256 of every byte while read, Content-MD5 on every request, every size and ETag',
    'confirmed from a listing of the dataset before the commit object, manifest and commit object last).',
    `Peer: \`rclone copy\` to an S3 remote on the same server (${toolVersion('rclone', ['version'])}, default`,
    "transfers and checkers; rclone checks each upload's MD5 against the server's answer and HEADs each",
    'uploaded object, its default without `--s3-no-head`). Ceiling: a',
    `bare upload of the same files with the SDK from the bench process (files up to 8 MiB PUT whole,`,
    `larger ones as multipart uploads of 8 MiB parts, ${CEILING_CONCURRENCY} requests in flight, no hashing).`,
    `${rounds} interleaved round(s) per dataset (\`BENCH_S3_ROUNDS\`, 3 by default), each side into new keys, the order rotated each round`,
    '(reversed every other round), the source read again before each side (warm page cache).',
    "CPU: the side's own (worker process; rclone; the bench process for the ceiling), and Swift's",
    '(all its processes, and its proxy alone, which is one process and so at most one core).',
    `${availableParallelism()} cores, shared with other engineers' work. Before each round the bench waits up to ${QUIET_WAIT_MS / 1000} s for a`,
    `1-minute load average of ${QUIET_LOAD} or less (\`BENCH_QUIET_LOAD\`, \`BENCH_QUIET_WAIT_S\`); a round that started above it is`,
    `marked † and left out of every median, unless no round was quiet.${ctx.quick ? ' **Quick mode: not a real figure.**' : ''}`,
    '',
  ];
  for (const r of results) {
    const counted = quietRounds(r.loadBefore);
    const at = (values: number[]) => counted.map((i) => values[i]);
    const mark = (i: number) => (counted.includes(i) ? '' : '†');
    lines.push(
      `### ${r.c.name} into S3 (${fmt(r.bytes / MiB)} MiB; load average before each round ${r.loadBefore.map((x, i) => fmt(x, 1) + mark(i)).join(', ')})`,
      '',
    );
    const files = r.c.files.length;
    const rows = [...r.sides.entries()].map(([label, m]) => [
      label,
      m.ms.map((x, i) => fmt(x, 0) + mark(i)).join(', '),
      `**${fmt(median(at(m.ms)), 0)}**`,
      fmt(r.bytes / 1e6 / (median(at(m.ms)) / 1000), 1),
      fmt(median(at(m.cpu.map((x, i) => x / m.ms[i]))), 2),
      fmt(median(at(m.cpu)) / files, 2),
      fmt(median(at(m.swiftCpu.map((x, i) => x / m.ms[i]))), 2),
      fmt(median(at(m.proxyCpu.map((x, i) => x / m.ms[i]))), 2),
    ]);
    lines.push(
      table(
        [
          'side',
          'ms per round',
          'median ms',
          'MB/s',
          'own CPU / wall',
          'own CPU ms per file',
          'Swift CPU / wall',
          'Swift proxy CPU / wall',
        ],
        rows,
      ),
      '',
    );
    const ours = r.sides.get(IMPORT)!;
    const theirs = r.sides.get(RCLONE)!;
    const ceiling = r.sides.get(CEILING)!.ms;
    const vsRclone = median(at(ours.ms.map((ms, i) => theirs.ms[i] / ms)));
    const ofCeiling = median(at(ours.ms.map((ms, i) => ceiling[i] / ms)));
    const cpuPerFile = (m: Measured) => median(at(m.cpu)) / files;
    const cpuOk = cpuPerFile(ours) <= cpuPerFile(theirs);
    checks.push(vsRclone >= VS_RCLONE_TARGET, ofCeiling >= OF_CEILING_TARGET, cpuOk);
    lines.push(
      `rclone time / import time per round ${ours.ms.map((ms, i) => fmt(theirs.ms[i] / ms, 2) + mark(i)).join(', ')}: median **${fmt(vsRclone, 2)}×** (target ≥ ${VS_RCLONE_TARGET}×: ${verdict(vsRclone >= VS_RCLONE_TARGET)}). ` +
        `Import at **${fmt(ofCeiling * 100, 0)} %** of the ceiling (ceiling time / import time, median; target ≥ ${OF_CEILING_TARGET * 100} %: ${verdict(ofCeiling >= OF_CEILING_TARGET)}). ` +
        `The import's CPU per file ${fmt(cpuPerFile(ours), 2)} ms against rclone's ${fmt(cpuPerFile(theirs), 2)} ms (target: no more: ${verdict(cpuOk)}).`,
      '',
    );
  }
  const memoryOk = memory !== undefined && memory.after < MEMORY_TARGET_BYTES;
  const concurrentOk = concurrent !== undefined && concurrent.peak < CONCURRENT_MEMORY_TARGET_BYTES;
  checks.push(memoryOk, concurrentOk);
  lines.push(
    '### Worker memory, S3 target',
    '',
    table(
      ['case', 'peak resident set (VmHWM)', 'target'],
      [
        [
          `one ${fmt(memoryBytes / GiB, 2)} GiB file into S3 (a fresh worker; its peak before ${memory ? fmt(memory.before / MiB) : '–'} MiB)`,
          memory
            ? `**${fmt(memory.after / MiB)} MiB** (${fmt(memory.after / 1e6)} MB)`
            : 'not measured',
          `< ${MEMORY_TARGET_BYTES / 1e6} MB: ${verdict(memoryOk)}`,
        ],
        [
          `${CONCURRENT_IMPORTS} imports of the mixed dataset into S3 at once (a fresh worker, IMPORT_CONCURRENCY=${CONCURRENT_IMPORTS}; done in ${concurrent ? fmt(concurrent.ms, 0) : '–'} ms)`,
          concurrent
            ? `**${fmt(concurrent.peak / MiB)} MiB** (${fmt(concurrent.peak / 1e6)} MB)`
            : 'not measured',
          `< ${CONCURRENT_MEMORY_TARGET_BYTES / 1e6} MB: ${verdict(concurrentOk)}`,
        ],
      ],
    ),
    '',
    `Load average (1, 5, 15 min) when the report was written: ${loadavg()
      .map((x) => fmt(x, 2))
      .join(', ')} (other engineers share the machine).`,
  );
  return {
    name: 's3-imports',
    title: 'Imports into S3',
    markdown: lines.join('\n'),
    targetsMet: checks.every(Boolean),
  };
}
