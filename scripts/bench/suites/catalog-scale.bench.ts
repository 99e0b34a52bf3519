import { availableParallelism } from 'node:os';
import { deployedNodeArgs } from '../../lib/deployed-node-args';
import { BENCH_GLOBAL_KEY, startCatalog, withGeneratedCatalog } from '../lib/catalog-process';
import type { BenchContext } from '../lib/context';
import { importDocument, timeGet } from '../lib/http-load';
import { datasetItems } from '../data/catalog-import-data';
import { cpuMs, postgresCpuMs, processMemory } from '../lib/processes';
import { fmt, median, SuiteReport, table, verdict } from '../lib/report';
import { metricSample } from '../../../test/support/prometheus-text';

const COLD_TARGET_MS = 2500;
const RESIDENT_TARGET_MIB = 400;
const MiB = 1024 * 1024;
/** The refresh that stores 50,000 exports takes seconds; a minute means something is wrong. */
const REFRESH_DEADLINE_MS = 120_000;

interface Round {
  ms: number;
  bytes: number;
  items: number;
  peakMiB: number;
  /** Exports the read rendered (the refresh after it stored them again). */
  rendered: number;
  /** CPU time of the catalog process (all its threads) and of every PostgreSQL process. */
  catalogCpuMs: number;
  postgresCpuMs: number;
}

/** The first read, when no export is stored yet, and the background refresh it starts. */
interface FirstRead {
  ms: number;
  refreshMs: number;
  stored: number;
}

/**
 * Polls the catalog's metrics until its export refresh has stored more than `before` exports in
 * all and stopped; returns how long that took and the new total.
 */
async function refreshed(url: string, before = 0): Promise<{ ms: number; stored: number }> {
  const started = performance.now();
  for (;;) {
    const text = await (await fetch(`${url}/metrics`)).text();
    const running = metricSample(text, 'catalog_dataset_exports_refreshing', {}) ?? 0;
    const stored = metricSample(text, 'catalog_dataset_exports_stored_total', {}) ?? 0;
    if (running === 0 && stored > before) return { ms: performance.now() - started, stored };
    if (performance.now() - started > REFRESH_DEADLINE_MS)
      throw new Error(`the dataset exports refresh did not finish in ${REFRESH_DEADLINE_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * `GET /api/datasets` (global key) over a large catalog: the cold answer's time and the
 * catalog's peak resident set while it builds and sends it. The first read renders every
 * export (none is stored yet) and starts the refresh that stores them; each round after it
 * follows a write through the API that adds a dataset (an import document of one), so each is
 * cold and renders that dataset's export.
 */
export async function catalogScaleBench(ctx: BenchContext): Promise<SuiteReport> {
  const datasets = ctx.quick ? 5000 : 50_000;
  const rounds = 5;
  return withGeneratedCatalog(ctx, datasets, async (catalog, _generated, generateMs) => {
    // As deployed: the catalog's heap cap applies.
    const nodeArgs = deployedNodeArgs('catalog-api/deployment.yaml');
    const app = await startCatalog(catalog.env, nodeArgs);
    const pid = app.child.pid!;
    const headers = { 'X-API-Key': BENCH_GLOBAL_KEY };
    try {
      // Lazy start-up work (first query plans, the first route) is not part of the figure.
      await timeGet(`${app.url}/api/projects?project_id=1`, headers);
      const startedMiB = processMemory(pid, 'VmRSS') / MiB;
      const initial = await timeGet(`${app.url}/api/datasets`, headers);
      if (initial.status !== 200) throw new Error(`/api/datasets answered ${initial.status}`);
      const refresh = await refreshed(app.url);
      const first: FirstRead = { ms: initial.ms, refreshMs: refresh.ms, stored: refresh.stored };
      ctx.log(
        `first read ${fmt(first.ms, 0)} ms; then ${first.stored} exports stored in ${fmt(first.refreshMs, 0)} ms`,
      );
      await importDocument(
        app.url,
        'projects',
        JSON.stringify({ items: [{ acronym: 'SCALE', name: 'Scale bench project' }] }),
      );
      let stored = first.stored;
      const results: Round[] = [];
      for (let round = 0; round < rounds; round++) {
        await timeGet(`${app.url}/api/projects`, headers);
        await importDocument(
          app.url,
          'datasets',
          JSON.stringify({ items: datasetItems(1, `round ${round + 1}`, 'SCALE') }),
        );
        const cpuBefore = { catalog: cpuMs(pid), postgres: postgresCpuMs() };
        const cold = await timeGet(`${app.url}/api/datasets`, headers);
        const cpu = {
          catalog: cpuMs(pid) - cpuBefore.catalog,
          postgres: postgresCpuMs() - cpuBefore.postgres,
        };
        if (cold.status !== 200) throw new Error(`/api/datasets answered ${cold.status}`);
        const items = (JSON.parse(cold.body.toString()) as { items: unknown[] }).items.length;
        const after = await refreshed(app.url, stored);
        const result = {
          rendered: after.stored - stored,
          ms: cold.ms,
          bytes: cold.body.length,
          items,
          peakMiB: processMemory(pid, 'VmHWM') / MiB,
          catalogCpuMs: cpu.catalog,
          postgresCpuMs: cpu.postgres,
        };
        results.push(result);
        stored = after.stored;
        ctx.log(
          `round ${round + 1}: cold ${fmt(result.ms, 0)} ms, ${fmt(result.bytes / MiB)} MiB, peak resident ${fmt(result.peakMiB, 0)} MiB`,
        );
      }
      return report(datasets, generateMs, nodeArgs, startedMiB, first, results, ctx.quick);
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
  first: FirstRead,
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
    `(\`node ${nodeArgs.join(' ')}\`). \`GET /api/datasets\` with the global key. The first read after start-up renders every`,
    `export, none being stored yet: ${fmt(first.ms, 0)} ms; the refresh it started stored ${first.stored} exports in ${fmt(first.refreshMs, 0)} ms after it.`,
    'Then each round right after a write that adds a dataset (`POST /api/datasets`, one item), so cold (an answer larger than',
    'RESPONSE_CACHE_MAX_BYTES is never kept anyway): the read copies the stored exports and renders those the write touched',
    '(rendered: what the refresh after the read stored again). Peak resident = VmHWM of the process since it started',
    `(${fmt(startedMiB, 0)} MiB resident before the first read).`,
    `Targets: cold < ${COLD_TARGET_MS} ms (median of ${results.length}), peak resident < ${RESIDENT_TARGET_MIB} MiB.${quick ? ' **Quick mode: not a real figure.**' : ''}`,
    '',
    table(
      [
        'round',
        'items',
        'rendered',
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
        r.rendered,
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
