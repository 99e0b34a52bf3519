import { join } from 'node:path';
import { startPrivateRedis } from '../../lib/private-redis';
import { growDropzone } from '../data/dropzone-data';
import type { BenchContext } from '../lib/context';
import { timeGet } from '../lib/http-load';
import { BENCH_WRITE_KEY, provisionerEnv, startProvisionerApi } from '../lib/provisioner-process';
import { fmt, SuiteReport, table, verdict } from '../lib/report';

const TARGET_MS = 2000;
/** One dataset in ten is not in storage yet: the diff lists those. */
const NOT_IMPORTED_EVERY = 10;

export async function diffBench(ctx: BenchContext): Promise<SuiteReport> {
  const sizes = ctx.quick ? [100, 1000] : [1000, 10_000, 100_000];
  const repetitions = 3;
  const base = join(ctx.tempDir, 'diff');
  const dropzone = join(base, 'dropzone');
  const storage = join(base, 'storage');
  const redis = await startPrivateRedis({ dir: join(base, 'redis') });
  const rows: { size: number; listed: number; generateS: number; ms: number[] }[] = [];
  try {
    let have = 0;
    for (const size of sizes) {
      const started = performance.now();
      growDropzone(dropzone, storage, have, size, NOT_IMPORTED_EVERY);
      have = size;
      const generateS = (performance.now() - started) / 1000;
      // A fresh API per size: the first request is as cold as after a deploy.
      const api = await startProvisionerApi(provisionerEnv({ redisUrl: redis.url, dropzone, storage }));
      try {
        const ms: number[] = [];
        let listed = 0;
        for (let i = 0; i < repetitions; i++) {
          const r = await timeGet(`${api.url}/datasets/dropzone/diff`, { 'X-API-Key': BENCH_WRITE_KEY });
          if (r.status !== 200) throw new Error(`diff answered ${r.status}: ${r.body.toString().slice(0, 300)}`);
          listed = (JSON.parse(r.body.toString()) as { count: number }).count;
          ms.push(r.ms);
        }
        rows.push({ size, listed, generateS, ms });
        ctx.log(`diff over ${size} datasets: ${ms.map((m) => fmt(m, 0)).join(', ')} ms (${listed} listed)`);
      } finally {
        await api.stop();
      }
    }
  } finally {
    await redis.stop();
  }
  const largest = rows[rows.length - 1];
  const ok = Math.min(...largest.ms) < TARGET_MS || Math.max(...largest.ms) < TARGET_MS;
  const best = (r: (typeof rows)[number]) => Math.min(...r.ms);
  const markdown = [
    '## Diff',
    '',
    '`GET /datasets/dropzone/diff` on the built provisioner API, a drop-zone source of ready datasets',
    `(100 per completed submission, one payload file each), storage holding 9 in 10 of them. First request after`,
    `start (cold), then two more. Target: < ${TARGET_MS} ms at 100,000.${ctx.quick ? ' **Quick mode: not a real figure.**' : ''}`,
    '',
    table(
      ['source datasets', 'listed (not imported)', 'cold ms', 'warm ms', 'µs per dataset', 'growth vs previous'],
      rows.map((r, i) => [
        r.size.toLocaleString('en'),
        r.listed.toLocaleString('en'),
        fmt(r.ms[0], 0),
        r.ms.slice(1).map((m) => fmt(m, 0)).join(', '),
        fmt((best(r) * 1000) / r.size, 1),
        i === 0 ? '–' : `${fmt(best(r) / best(rows[i - 1]), 1)}× for ${r.size / rows[i - 1].size}× the data`,
      ]),
    ),
    '',
    `At ${largest.size.toLocaleString('en')}: best ${fmt(best(largest), 0)} ms, target ${verdict(best(largest) < TARGET_MS)}.`,
  ].join('\n');
  return { name: 'diff', title: 'Diff', markdown, targetsMet: ok && best(largest) < TARGET_MS };
}
