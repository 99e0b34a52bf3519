import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startPrivateRedis } from '../../lib/private-redis';
import { FileSpec, mixedDataset, smallFiles, writeImportDataset } from '../data/import-data';
import type { BenchContext } from '../lib/context';
import { sleep } from '../lib/processes';
import { BENCH_WRITE_KEY, provisionerEnv, startProvisionerApi, startWorker } from '../lib/provisioner-process';
import { fmt, SuiteReport, table, verdict } from '../lib/report';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/** Reads every file once, so cp and the import both start from a warm page cache. */
function warm(dir: string): void {
  spawnSync('sh', ['-c', `find "${dir}" -type f -exec cat {} + > /dev/null`]);
}

/** `cp -r` then `sync -f` (syncfs of the target filesystem): the physical limit of the copy. */
function timeCp(source: string, target: string): number {
  rmSync(target, { recursive: true, force: true });
  spawnSync('sync');
  const started = performance.now();
  const cp = spawnSync('cp', ['-r', source, target]);
  const sync = spawnSync('sync', ['-f', target]);
  const ms = performance.now() - started;
  if (cp.status !== 0 || sync.status !== 0) throw new Error(`cp or sync failed: ${cp.stderr}${sync.stderr}`);
  rmSync(target, { recursive: true, force: true });
  return ms;
}

async function timeImport(apiUrl: string, datasetId: string): Promise<number> {
  spawnSync('sync');
  const headers = { 'X-API-Key': BENCH_WRITE_KEY, 'Content-Type': 'application/json' };
  const started = performance.now();
  const res = await fetch(`${apiUrl}/datasets/dropzone/import`, { method: 'POST', headers, body: JSON.stringify({ dataset_id: datasetId }) });
  const record = (await res.json()) as { id: string };
  if (res.status !== 202) throw new Error(`import of ${datasetId} answered ${res.status}: ${JSON.stringify(record)}`);
  const deadline = Date.now() + 600_000;
  for (;;) {
    const poll = await fetch(`${apiUrl}/imports/${record.id}`, { headers });
    const state = (await poll.json()) as { state: string; error: unknown };
    if (state.state === 'imported') return performance.now() - started;
    if (state.state === 'failed' || state.state === 'rejected') throw new Error(`import ${record.id} ${state.state}: ${JSON.stringify(state.error)}`);
    if (Date.now() > deadline) throw new Error(`import ${record.id} still ${state.state} after 10 min`);
    await sleep(20);
  }
}

function vm(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : NaN;
}

interface CopyCase {
  name: string;
  datasetId: string;
  files: FileSpec[];
  target: number;
}

export async function importsBench(ctx: BenchContext): Promise<SuiteReport> {
  const base = join(ctx.tempDir, 'imports');
  const dropzone = join(base, 'dropzone');
  const storage = join(base, 'storage');
  const scale = ctx.quick ? 1 / 16 : 1;
  const cases: CopyCase[] = [
    { name: `${fmt(scale, 3)} GiB mixed (3 large files + 1,000 small)`, datasetId: 'MIXED', files: mixedDataset(Math.round(GiB * scale)), target: 0.8 },
    { name: `${ctx.quick ? 1000 : 10_000} small files of 4 KiB`, datasetId: 'SMALL', files: smallFiles(ctx.quick ? 1000 : 10_000, 4096), target: 0.5 },
  ];
  const memoryBytes = ctx.quick ? 256 * MiB : 2 * GiB;
  for (const c of cases) writeImportDataset(dropzone, c.datasetId, c.files);
  writeImportDataset(dropzone, 'HUGE', [{ path: 'one-big-file.bin', size: memoryBytes }], true);
  ctx.log('datasets written');

  const redis = await startPrivateRedis({ dir: join(base, 'redis') });
  const env = provisionerEnv({ redisUrl: redis.url, dropzone, storage, extra: { IMPORT_CONCURRENCY: '1' } });
  const api = await startProvisionerApi(env);
  const worker = await startWorker(env);
  const rows: { c: CopyCase; cpMs: number; importMs: number; bytes: number }[] = [];
  let memory: { before: number; after: number; rss: number } | undefined;
  try {
    for (const c of cases) {
      const source = join(dropzone, 'datasets', c.datasetId, 'payload');
      warm(source);
      const cpMs = timeCp(source, join(base, 'cp-target'));
      const importMs = await timeImport(api.url, c.datasetId);
      const bytes = c.files.reduce((sum, f) => sum + f.size, 0);
      rows.push({ c, cpMs, importMs, bytes });
      ctx.log(`${c.name}: cp+sync ${fmt(cpMs, 0)} ms, import ${fmt(importMs, 0)} ms (${fmt(cpMs / importMs, 2)}x)`);
    }
    const pid = worker.child.pid!;
    const before = vm(pid, 'VmHWM');
    await timeImport(api.url, 'HUGE');
    memory = { before, after: vm(pid, 'VmHWM'), rss: vm(pid, 'VmRSS') };
    ctx.log(`worker peak RSS ${fmt(memory.after / MiB)} MiB (before the 2 GiB import ${fmt(before / MiB)} MiB)`);
  } finally {
    await worker.stop();
    await api.stop();
    await redis.stop();
    rmSync(base, { recursive: true, force: true });
  }
  const memoryOk = memory !== undefined && memory.after < 200 * MiB;
  const results = rows.map((r) => ({ ...r, ratio: r.cpMs / r.importMs }));
  const markdown = [
    '## Imports',
    '',
    'The built provisioner API and one worker process (IMPORT_CONCURRENCY=1, a private Redis), a drop-zone',
    'dataset of pseudo-random bytes, storage on the same filesystem. Import time: from the POST until the',
    'record says `imported` (preflight, hashing copy, fsync, verification, provenance, publish, read-only).',
    'Ceiling: `cp -r` of the same payload followed by `sync -f` on the target, measured just before, both',
    `from a warm page cache.${ctx.quick ? ' **Quick mode: not a real figure.**' : ''}`,
    '',
    table(
      ['dataset', 'bytes', 'cp -r + sync ms', 'import ms', 'import MB/s', 'ratio (cp time / import time)', 'target'],
      results.map((r) => [
        r.c.name,
        `${fmt(r.bytes / MiB)} MiB`,
        fmt(r.cpMs, 0),
        fmt(r.importMs, 0),
        fmt(r.bytes / 1e6 / (r.importMs / 1000)),
        `**${fmt(r.ratio, 2)}×**`,
        `≥ ${r.c.target}×: ${verdict(r.ratio >= r.c.target)}`,
      ]),
    ),
    '',
    memory
      ? `**Worker memory** while importing one ${fmt(memoryBytes / GiB, 2)} GiB file: peak resident set (VmHWM of the worker process) ` +
        `**${fmt(memory.after / MiB)} MiB** (${fmt(memory.before / MiB)} MiB before that import; ${fmt(memory.rss / MiB)} MiB after). ` +
        `Target < 200 MB: ${verdict(memoryOk)}.`
      : '**Worker memory**: not measured (the run failed before).',
  ].join('\n');
  return {
    name: 'imports',
    title: 'Imports',
    markdown,
    targetsMet: memoryOk && results.every((r) => r.ratio >= r.c.target),
  };
}
