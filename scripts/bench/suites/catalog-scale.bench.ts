import { availableParallelism } from 'node:os';
import { deployedNodeArgs } from '../../lib/deployed-node-args';
import { BENCH_GLOBAL_KEY, startCatalog, withGeneratedCatalog } from '../lib/catalog-process';
import type { BenchContext } from '../lib/context';
import { benchWrite, timeGet } from '../lib/http-load';
import { cpuMs, postgresCpuMs, processMemory } from '../lib/processes';
import { fmt, median, SuiteReport, table, verdict } from '../lib/report';

const COLD_TARGET_MS = 2500;
const RESIDENT_TARGET_MIB = 400;
const MiB = 1024 * 1024;

interface Round {
  ms: number;
  bytes: number;
  items: number;
  peakMiB: number;
  /** CPU time of the catalog process (all its threads) and of every PostgreSQL process. */
  catalogCpuMs: number;
  postgresCpuMs: number;
}

/**
 * `GET /api/datasets` (global key) over a large catalog: the cold answer's time and the
 * catalog's peak resident set while it builds and sends it. Each round follows a write through
 * the API, so each is cold.
 */
export async function catalogScaleBench(ctx: BenchContext): Promise<SuiteReport> {
  const datasets = ctx.quick ? 5000 : 50_000;
  const rounds = 3;
  return withGeneratedCatalog(ctx, datasets, async (catalog, generated, generateMs) => {
    // As deployed: the catalog's heap cap applies.
    const nodeArgs = deployedNodeArgs('catalog-api/deployment.yaml');
    const app = await startCatalog(catalog.env, nodeArgs);
    const pid = app.child.pid!;
    const headers = { 'X-API-Key': BENCH_GLOBAL_KEY };
    try {
      // Lazy start-up work (first query plans, the first route) is not part of the figure.
      await timeGet(`${app.url}/api/projects?project_id=1`, headers);
      const startedMiB = processMemory(pid, 'VmRSS') / MiB;
      const results: Round[] = [];
      for (let round = 0; round < rounds; round++) {
        await timeGet(`${app.url}/api/projects`, headers);
        await benchWrite(app.url, generated.viewerId, round);
        const cpuBefore = { catalog: cpuMs(pid), postgres: postgresCpuMs() };
        const cold = await timeGet(`${app.url}/api/datasets`, headers);
        const cpu = {
          catalog: cpuMs(pid) - cpuBefore.catalog,
          postgres: postgresCpuMs() - cpuBefore.postgres,
        };
        if (cold.status !== 200) throw new Error(`/api/datasets answered ${cold.status}`);
        const items = (JSON.parse(cold.body.toString()) as { items: unknown[] }).items.length;
        const result = {
          ms: cold.ms,
          bytes: cold.body.length,
          items,
          peakMiB: processMemory(pid, 'VmHWM') / MiB,
          catalogCpuMs: cpu.catalog,
          postgresCpuMs: cpu.postgres,
        };
        results.push(result);
        ctx.log(
          `round ${round + 1}: cold ${fmt(result.ms, 0)} ms, ${fmt(result.bytes / MiB)} MiB, peak resident ${fmt(result.peakMiB, 0)} MiB`,
        );
      }
      return report(datasets, generateMs, nodeArgs, startedMiB, results, ctx.quick);
    } finally {
      await app.stop();
    }
  });
}

function report(
  datasets: number,
  generateMs: number,
  nodeArgs: string[],
  startedMiB: number,
  results: Round[],
  quick: boolean,
): SuiteReport {
  const coldMs = median(results.map((r) => r.ms));
  const peakMiB = Math.max(...results.map((r) => r.peakMiB));
  const ok = coldMs < COLD_TARGET_MS && peakMiB < RESIDENT_TARGET_MIB;
  const markdown = [
    '## Catalog at scale',
    '',
    `${datasets} datasets from the synthetic generator (generated in ${fmt(generateMs / 1000)} s), the built catalog run as deployed`,
    `(\`node ${nodeArgs.join(' ')}\`). \`GET /api/datasets\` with the global key, each round right after a write (so cold;`,
    'an answer larger than RESPONSE_CACHE_MAX_BYTES is never kept anyway). Peak resident = VmHWM of the process since it started',
    `(${fmt(startedMiB, 0)} MiB resident before the first round).`,
    `Targets: cold < ${COLD_TARGET_MS} ms (median of ${results.length}), peak resident < ${RESIDENT_TARGET_MIB} MiB.${quick ? ' **Quick mode: not a real figure.**' : ''}`,
    '',
    table(
      [
        'round',
        'items',
        'MiB',
        'cold ms',
        'peak resident MiB',
        'catalog CPU ms',
        'PostgreSQL CPU ms',
        'CPU / wall',
      ],
      results.map((r, i) => [
        i + 1,
        r.items,
        fmt(r.bytes / MiB, 1),
        fmt(r.ms, 0),
        fmt(r.peakMiB, 0),
        fmt(r.catalogCpuMs, 0),
        fmt(r.postgresCpuMs, 0),
        fmt((r.catalogCpuMs + r.postgresCpuMs) / r.ms, 2),
      ]),
    ),
    '',
    `Median cold ${fmt(coldMs, 0)} ms, peak resident ${fmt(peakMiB, 0)} MiB: ${verdict(ok)}.`,
    `CPU / wall is the catalog's and PostgreSQL's CPU time (every server process, background work included) over the`,
    `answer's time: ${availableParallelism()} is every core of this machine busy with the answer, 1 one core's worth.`,
  ].join('\n');
  return { name: 'catalog-scale', title: 'Catalog at scale', markdown, targetsMet: ok };
}
