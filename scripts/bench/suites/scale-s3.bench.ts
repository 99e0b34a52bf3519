import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { writeImportDataset } from '../data/import-data';
import type { BenchContext } from '../lib/context';
import { freePortBlock } from '../../lib/child-process';
import { cpuMs, processMemory, ROOT, sleep } from '../lib/processes';
import { BENCH_WRITE_KEY } from '../lib/provisioner-process';
import { fmt, SuiteReport, table, verdict } from '../lib/report';
import { postImport, settle, startSetup, warm } from './imports.bench';
import {
  bareUpload,
  CEILING_CONCURRENCY,
  localS3Client,
  startSwift,
  type Swift,
  swiftStorageEnv,
} from './s3-imports.bench';
import { scaleTree } from './scale.bench';

const MiB = 1024 ** 2;
/** The line for the worker's peak resident set at every size. */
const FLAT_MEMORY_BYTES = 300 * MiB;
/** Sizes when `--scale-sizes` does not name others: Swift takes ~4 ms an object here. */
const DEFAULT_SIZES = [10_000, 100_000];
const QUICK_SIZES = [1_000, 5_000];
/**
 * BENCH_S3_STAND_IN=1: the S3 server is scripts/s3/s3-stand-in.mjs instead of Swift, for the
 * worker's memory at a million objects (Swift here takes ~4 ms an object: over an hour). Its
 * times are not Swift's: the report names the server, and the cost per file is the worker's.
 */
const STAND_IN = process.env.BENCH_S3_STAND_IN === '1';
const SERVER = STAND_IN ? 'the S3 stand-in' : 'Swift';

/** A million files: the shipped defaults, set here so that the suite measures them whatever the defaults become. */
const SCALE_SETTINGS = {
  IMPORT_MAX_FILES: '1000000',
  SOURCE_MANIFEST_MAX_BYTES: String(128 * MiB),
};

interface S3SizeResult {
  files: number;
  /** Which side went first (the two alternate from size to size). */
  floorFirst: boolean;
  loadBefore: number;
  loadAfter: number;
  importMs: number;
  /** Swift's CPU (all its processes) during the import, and the worker's own. */
  importSwiftCpuMs: number;
  workerCpuMs: number;
  floorLoadBefore: number;
  floorLoadAfter: number;
  floorMs: number;
  floorSwiftCpuMs: number;
  steps: string;
  workerPeak: number;
  apiPeak: number;
}

function sizes(ctx: BenchContext): number[] {
  return ctx.scaleSizes ?? (ctx.quick ? QUICK_SIZES : DEFAULT_SIZES);
}

/**
 * The scale section's S3 side: per size, a dataset of `scaleTree` files (4 KiB) imported once
 * into S3 storage on a private Swift server, each size on a fresh API and worker so that the
 * worker's VmHWM is that size's. Reports the import's time per file and the worker's peak, the
 * peak's slope per file between the sizes, and both extrapolated to a million objects.
 */
export async function scaleS3Bench(ctx: BenchContext): Promise<SuiteReport> {
  const base = join(ctx.tempDir, 'scale-s3');
  const swift = STAND_IN ? await startStandIn() : await startSwift(join(base, 'swift'));
  const results: S3SizeResult[] = [];
  try {
    const all = sizes(ctx);
    for (let n = 0; n < all.length; n++) {
      const files = all[n];
      // A bucket (a Swift container, its listing database) per size and side: each starts empty.
      const bucket = `scale-${files}`;
      await swift.client.send(new CreateBucketCommand({ Bucket: bucket }));
      await swift.client.send(new CreateBucketCommand({ Bucket: `floor-${files}` }));
      const s3Env = { ...swiftStorageEnv(swift.endpoint, bucket), ...SCALE_SETTINGS };
      results.push(await scaleS3One(ctx, base, files, s3Env, swift, n % 2 === 0));
    }
  } finally {
    swift.stop();
    rmSync(base, { recursive: true, force: true });
  }
  return report(results);
}

async function scaleS3One(
  ctx: BenchContext,
  base: string,
  files: number,
  s3Env: NodeJS.ProcessEnv,
  swift: Swift,
  floorFirst: boolean,
): Promise<S3SizeResult> {
  const dropzone = join(base, `dropzone-${files}`);
  const id = `SCALE-S3-${files}`;
  const payload = join(dropzone, 'datasets', id, 'payload');
  const tree = scaleTree(files);
  try {
    writeImportDataset(dropzone, id, tree);
    ctx.log(`${files} files written`);
    const setup = await startSetup('redis', join(base, `run-${files}`), dropzone, s3Env);
    try {
      const floor = async () => {
        // The floor is Swift's cost per object: the stand-in's would say nothing (and its bare
        // PUTs cost the bench process ~1 ms of the SDK's CPU each: 17 min at a million).
        if (STAND_IN)
          return { floorLoadBefore: NaN, floorLoadAfter: NaN, floorMs: NaN, floorSwiftCpuMs: NaN };
        warm(payload);
        await settle();
        const loadBefore = loadavg()[0];
        const swiftBefore = swift.cpu();
        const started = performance.now();
        await bareUpload(swift.client, `floor-${files}`, `datasets/${id}`, payload, tree);
        const ms = performance.now() - started;
        const measured = {
          floorLoadBefore: loadBefore,
          floorLoadAfter: loadavg()[0],
          floorMs: ms,
          floorSwiftCpuMs: swift.cpu() - swiftBefore,
        };
        ctx.log(
          `S3 (${SERVER}) ${files} bare PUTs: ${fmt(ms / 1000, 1)} s (${fmt((ms * 1000) / files, 0)} µs an object), load ${fmt(loadBefore, 2)} → ${fmt(measured.floorLoadAfter, 2)}`,
        );
        return measured;
      };
      const floorResult = floorFirst ? await floor() : null;
      warm(payload);
      await settle();
      const loadBefore = loadavg()[0];
      const swiftBefore = swift.cpu();
      const workerBefore = cpuMs(setup.worker.child.pid!);
      const started = performance.now();
      const recordId = await postImport(setup.apiUrl, id);
      await awaitImported(setup.apiUrl, recordId, files);
      const importMs = performance.now() - started;
      const imported = {
        loadBefore,
        loadAfter: loadavg()[0],
        importMs,
        importSwiftCpuMs: swift.cpu() - swiftBefore,
        workerCpuMs: cpuMs(setup.worker.child.pid!) - workerBefore,
        steps: setup.steps.get(recordId) ?? '–',
        workerPeak: processMemory(setup.worker.child.pid!, 'VmHWM'),
        apiPeak: processMemory(setup.api.child.pid!, 'VmHWM'),
      };
      ctx.log(
        `S3 (${SERVER}) ${files} files: ${fmt(importMs / 1000, 1)} s (${fmt((importMs * 1000) / files, 0)} µs a file), worker peak ${fmt(imported.workerPeak / MiB)} MiB, load ${fmt(loadBefore, 2)} → ${fmt(imported.loadAfter, 2)}`,
      );
      return { files, floorFirst, ...imported, ...(floorResult ?? (await floor())) };
    } finally {
      await setup.stop();
    }
  } finally {
    rmSync(dropzone, { recursive: true, force: true });
  }
}

/** The stand-in S3 server (STAND_IN) as the Swift interface the suite uses. */
async function startStandIn(): Promise<Swift> {
  const port = await freePortBlock(1);
  const child = spawn(process.execPath, [join(ROOT, 'scripts/s3/s3-stand-in.mjs'), String(port)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`s3 stand-in exited with ${code}`)));
  });
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    client: localS3Client(endpoint),
    cpu: () => cpuMs(child.pid!),
    proxyCpu: () => cpuMs(child.pid!),
    ingest: () => {
      throw new Error('the s3 stand-in ingests nothing');
    },
    stop: () => void child.kill(),
  };
}

/** Until the record says imported; the deadline grows with the size (Swift: ~4 ms an object). */
async function awaitImported(apiUrl: string, id: string, files: number): Promise<void> {
  const deadline = Date.now() + 600_000 + files * 20;
  const headers = { 'X-API-Key': BENCH_WRITE_KEY };
  for (;;) {
    const answer = await fetch(`${apiUrl}/imports/${id}`, { headers }).catch(() => null);
    if (answer) {
      const record = (await answer.json()) as { state: string; error: unknown };
      if (record.state === 'imported') return;
      if (record.state === 'failed' || record.state === 'rejected')
        throw new Error(`import ${id} ${record.state}: ${JSON.stringify(record.error)}`);
      if (Date.now() > deadline) throw new Error(`import ${id} still ${record.state}`);
    }
    await sleep(200);
  }
}

function report(results: S3SizeResult[]): SuiteReport {
  const perFile = (r: S3SizeResult) => (r.importMs * 1000) / r.files;
  const floorPerFile = (r: S3SizeResult) => (r.floorMs * 1000) / r.files;
  const first = results[0];
  const last = results[results.length - 1];
  // Peak per file between the smallest and the largest size: what each further file costs.
  const slope =
    results.length > 1 ? (last.workerPeak - first.workerPeak) / (last.files - first.files) : NaN;
  const atMillion = first ? first.workerPeak + slope * (1_000_000 - first.files) : NaN;
  const flat = results.every((r) => r.workerPeak < FLAT_MEMORY_BYTES);
  const ratio = last && first ? perFile(last) / perFile(first) : NaN;
  const floorRatio = last && first ? floorPerFile(last) / floorPerFile(first) : NaN;
  const perObjectMs = (ms: number, files: number) => `${fmt(ms / files, 2)} ms`;
  const rows = results.map((r) => [
    r.files.toLocaleString('en'),
    r.floorFirst ? 'bare PUTs' : 'import',
    `${fmt(r.loadBefore, 2)} → ${fmt(r.loadAfter, 2)}; ${fmt(r.floorLoadBefore, 2)} → ${fmt(r.floorLoadAfter, 2)}`,
    `${fmt(r.importMs / 1000, 1)} s`,
    `${fmt(perFile(r), 0)} µs`,
    `${fmt(r.floorMs / 1000, 1)} s`,
    `${fmt(floorPerFile(r), 0)} µs`,
    `**${fmt(perFile(r) / floorPerFile(r), 2)}×**`,
    `${fmt(perFile(r) / perFile(first), 2)}×; ${fmt(floorPerFile(r) / floorPerFile(first), 2)}×`,
    `${perObjectMs(r.importSwiftCpuMs, r.files)}; ${perObjectMs(r.floorSwiftCpuMs, r.files)}`,
    perObjectMs(r.workerCpuMs, r.files),
    `${fmt(r.workerPeak / MiB)} MiB`,
    `${fmt(r.apiPeak / MiB)} MiB`,
  ]);
  const growthMet = ratio <= 1.25;
  const growthVerdict = growthMet
    ? verdict(true)
    : floorRatio > 1.25
      ? `${verdict(false)}; the bare PUTs' own cost per object grew ${fmt(floorRatio, 2)}× over the same sizes (the floor that stops it: Swift's), the import's ${fmt(ratio / floorRatio, 2)}× the floor's growth`
      : `${verdict(false)}; the bare PUTs grew ${fmt(floorRatio, 2)}× (within 1.25×): the import's own`;
  const markdown = [
    '## Imports into S3 as the object count grows',
    '',
    "Datasets of 4 KiB files in the scale section's tree, each imported once into S3 storage on a",
    STAND_IN
      ? 'minimal in-memory S3 stand-in (scripts/s3/s3-stand-in.mjs, BENCH_S3_STAND_IN=1), **not Swift**: the worker\'s memory and CPU are its own, the times and "Swift CPU" the stand-in\'s, no floor is run; each size on a fresh API and'
      : 'private Swift server with s3api (scripts/s3/swift-s3-server.sh), each size on a fresh API and',
    'worker with the defaults but (`IMPORT_MAX_FILES=1000000`, `SOURCE_MANIFEST_MAX_BYTES=134217728`).',
    "Peaks are each process's VmHWM over its life. `--scale-sizes` names other sizes.",
    `Floor, in the same run at each size: bare PUTs of the same files into a bucket of their own`,
    `on the same Swift (the SDK from the bench process, ${CEILING_CONCURRENCY} requests in flight as the worker's S3 copy`,
    'lanes, no hashing, no Content-MD5, no manifest, no listing): what the objects cost Swift alone.',
    'Each side writes into a bucket (a Swift container) of its own, empty at the start; the two',
    'sides take turns at going first from size to size. CPU per object: Swift (all its processes)',
    "during each side, and the worker's own during the import.",
    '',
    table(
      [
        'files',
        'first',
        'load (1 min) before → after: import; bare PUTs',
        'import',
        'per file',
        'bare PUTs',
        'per object',
        'import / floor',
        'per file vs the smallest: import; bare PUTs',
        'Swift CPU per object: import; bare PUTs',
        'worker CPU per file',
        'worker peak',
        'API peak',
      ],
      rows,
    ),
    '',
    "The worker's steps (ms):",
    '',
    table(
      ['files', 'steps'],
      results.map((r) => [r.files.toLocaleString('en'), `\`${r.steps}\``]),
    ),
    '',
    `- worker peak per further file (smallest to largest size): ${fmt(slope, 1)} bytes; at 1,000,000 objects by that slope: ${fmt(atMillion / MiB)} MiB`,
    `- worker under ${FLAT_MEMORY_BYTES / MiB} MiB at every size measured: ${verdict(flat)}`,
    `- cost per file, largest size against the smallest: ${fmt(ratio, 2)}× (target at most 1.25×): ${growthVerdict}`,
  ].join('\n');
  return {
    name: 'scale-s3',
    title: 'Imports into S3 as the object count grows',
    markdown,
    targetsMet: flat && growthMet && atMillion < FLAT_MEMORY_BYTES,
  };
}
