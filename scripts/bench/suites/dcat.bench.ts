import { loadavg } from 'node:os';
import { deployedNodeArgs } from '../../lib/deployed-node-args';
import { BENCH_GLOBAL_KEY, startCatalog, withGeneratedCatalog } from '../lib/catalog-process';
import type { BenchContext } from '../lib/context';
import { timeGet } from '../lib/http-load';
import { processMemory } from '../lib/processes';
import { fmt, percentile, SuiteReport, table, verdict } from '../lib/report';

const RESIDENT_TARGET_MIB = 400;
/** Issue 61: the whole catalog in DCAT Turtle in at most twice the JSON export's time. */
const DCAT_RATIO_TARGET = 2;
/** `/health/live` while six full pages are exported at once: what the kubelet waits for. */
const LIVENESS_TARGET_MS = 1000;
const CONCURRENT_EXPORTS = 6;
const MiB = 1024 * 1024;

const DCAT_ENV = {
  DCAT_PUBLISHER_NAME: 'Bench Institute',
  DCAT_CONTACT_EMAIL: 'catalog@bench.example',
  DCAT_HDAB_NAME: 'Bench HDAB',
  DCAT_HDAB_EMAIL: 'hdab@bench.example',
};

interface Walk {
  ms: number;
  bytes: number;
  pages: number;
}

/** Every page of GET /api/dcat in `format`, following hydra:next (as a harvester does). */
async function walkDcat(url: string, format: string): Promise<Walk> {
  const headers = { 'X-API-Key': BENCH_GLOBAL_KEY };
  let next: string | undefined = `${url}/api/dcat?format=${format}`;
  const walk: Walk = { ms: 0, bytes: 0, pages: 0 };
  while (next !== undefined) {
    const res = await timeGet(next, headers);
    if (res.status !== 200) throw new Error(`${next} answered ${res.status}`);
    walk.ms += res.ms;
    walk.bytes += res.body.length;
    walk.pages++;
    const link = /(?:hydra:next <|hydra\/core#next":\[\{"@id":")[^>"]*page=(\d+)/.exec(
      res.body.toString(),
    );
    next = link === null ? undefined : `${url}/api/dcat?page=${link[1]}&format=${format}`;
  }
  return walk;
}

async function getJson(url: string): Promise<Walk> {
  const res = await timeGet(`${url}/api/datasets`, { 'X-API-Key': BENCH_GLOBAL_KEY });
  if (res.status !== 200) throw new Error(`/api/datasets answered ${res.status}`);
  return { ms: res.ms, bytes: res.body.length, pages: 1 };
}

interface Liveness {
  idle: number[];
  busy: number[];
  exportsMs: number;
}

/** `/health/live` every 20 ms until `work` ends: each probe's time. */
async function probeLiveness(url: string, work: Promise<unknown>): Promise<number[]> {
  let going = true;
  const times: number[] = [];
  const done = work.finally(() => (going = false));
  while (going) {
    times.push((await timeGet(`${url}/health/live`)).ms);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await done;
  return times;
}

/**
 * Liveness alone for two seconds, then while CONCURRENT_EXPORTS first pages (Turtle and JSON-LD
 * in turn) are exported at once: the probe must never wait on an export.
 */
async function livenessUnderExports(url: string): Promise<Liveness> {
  const idle = await probeLiveness(url, new Promise((resolve) => setTimeout(resolve, 2000)));
  const started = performance.now();
  const exports = Promise.all(
    Array.from({ length: CONCURRENT_EXPORTS }, (_, i) =>
      timeGet(`${url}/api/dcat?format=${i % 2 === 0 ? 'ttl' : 'jsonld'}`, {
        'X-API-Key': BENCH_GLOBAL_KEY,
      }),
    ),
  );
  const busy = await probeLiveness(url, exports);
  return { idle, busy, exportsMs: performance.now() - started };
}

interface Row {
  datasets: number;
  what: string;
  cold: Walk;
  warm: Walk;
  peakMiB: number;
}

/** Rounds of every reader (each a fresh process), in alternating order. */
const ROUNDS = 2;

/** One reader's rounds as one row: the mean times, the highest peak. */
function meanRow(runs: Row[]): Row {
  const mean = (walks: Walk[]): Walk => ({
    ...walks[0],
    ms: walks.reduce((sum, w) => sum + w.ms, 0) / walks.length,
  });
  return {
    ...runs[0],
    cold: mean(runs.map((r) => r.cold)),
    warm: mean(runs.map((r) => r.warm)),
    peakMiB: Math.max(...runs.map((r) => r.peakMiB)),
  };
}

/**
 * GET /api/dcat (every Hydra page, Turtle and JSON-LD) beside GET /api/datasets (the JSON
 * export) over the same synthetic catalog, each cold (the first read after the catalog
 * started) and warm (the same read again), with the catalog's peak resident set.
 */
export async function dcatBench(ctx: BenchContext): Promise<SuiteReport> {
  const sizes = ctx.quick ? [500, 5000] : [5000, 50_000];
  const nodeArgs = deployedNodeArgs('catalog-api/deployment.yaml');
  const rows: Row[] = [];
  let liveness: Liveness | undefined;
  const loadBefore = loadavg()[0];
  for (const datasets of sizes) {
    await withGeneratedCatalog(ctx, datasets, async (catalog) => {
      if (liveness === undefined) {
        const app = await startCatalog({ ...catalog.env, ...DCAT_ENV }, nodeArgs);
        try {
          liveness = await livenessUnderExports(app.url);
        } finally {
          await app.stop();
        }
      }
      const readers = [
        ['JSON /api/datasets', getJson],
        ['DCAT Turtle', (url: string) => walkDcat(url, 'ttl')],
        ['DCAT JSON-LD', (url: string) => walkDcat(url, 'jsonld')],
      ] as const;
      const runs = new Map<string, Row[]>();
      // Rounds in alternating order (the second reversed): a change of the machine's load
      // during the run weighs on every reader alike, and the ratios compare like with like.
      for (let round = 0; round < ROUNDS; round++) {
        for (const [what, read] of round % 2 === 0 ? readers : [...readers].reverse()) {
          // A fresh process per reader: its cold read and its peak are its own.
          const app = await startCatalog({ ...catalog.env, ...DCAT_ENV }, nodeArgs);
          try {
            const cold = await read(app.url);
            const warm = await read(app.url);
            const peakMiB = processMemory(app.child.pid!, 'VmHWM') / MiB;
            runs.set(what, [...(runs.get(what) ?? []), { datasets, what, cold, warm, peakMiB }]);
            ctx.log(
              `${datasets} ${what} (round ${round + 1}): cold ${fmt(cold.ms, 0)} ms, warm ${fmt(warm.ms, 0)} ms, ${fmt(cold.bytes / MiB)} MiB in ${cold.pages} page(s), peak ${fmt(peakMiB, 0)} MiB, load ${fmt(loadavg()[0], 1)}`,
            );
          } finally {
            await app.stop();
          }
        }
      }
      for (const [what] of readers) rows.push(meanRow(runs.get(what)!));
    });
  }
  const peak = Math.max(...rows.map((r) => r.peakMiB));
  const live = liveness!;
  const slowestProbe = Math.max(...live.busy);
  const json = (datasets: number) =>
    rows.find((r) => r.datasets === datasets && r.what.startsWith('JSON'))!;
  const largest = sizes[sizes.length - 1];
  const turtle = rows.find((r) => r.datasets === largest && r.what === 'DCAT Turtle')!;
  const ratio = turtle.cold.ms / json(largest).cold.ms;
  const ratioOk = ratio <= DCAT_RATIO_TARGET;
  const ok = peak < RESIDENT_TARGET_MIB && slowestProbe < LIVENESS_TARGET_MS && ratioOk;
  const markdown = [
    '## DCAT-AP export',
    '',
    `Synthetic catalogs, the built catalog run as deployed (\`node ${nodeArgs.join(' ')}\`), global key. DCAT: every page of`,
    '`GET /api/dcat` (1,000 datasets a page) followed by `hydra:next` one after the other, as a harvester reads it; JSON:',
    '`GET /api/datasets`, the same datasets in one answer. Cold: the first read after the process started (the JSON',
    'renders every export, none being stored yet); warm: the same read again. Ratio: DCAT time over JSON time.',
    `Each figure is the mean of ${ROUNDS} rounds, the readers in alternating order (JSON, Turtle, JSON-LD, then the reverse),`,
    'so the two sides of every ratio are measured under the same load. Target (issue 61): 50,000 datasets of',
    'DCAT Turtle in at most 2× the JSON cold time.',
    `Target: peak resident (VmHWM) < ${RESIDENT_TARGET_MIB} MiB.${ctx.quick ? ' **Quick mode: not a real figure.**' : ''}`,
    '',
    table(
      [
        'datasets',
        'read',
        'pages',
        'MiB',
        'cold ms',
        'warm ms',
        'cold / JSON cold',
        'warm / JSON warm',
        'peak resident MiB',
      ],
      rows.map((r) => [
        r.datasets,
        r.what,
        r.cold.pages,
        fmt(r.cold.bytes / MiB, 1),
        fmt(r.cold.ms, 0),
        fmt(r.warm.ms, 0),
        fmt(r.cold.ms / json(r.datasets).cold.ms, 2),
        fmt(r.warm.ms / json(r.datasets).warm.ms, 2),
        fmt(r.peakMiB, 0),
      ]),
    ),
    '',
    `Peak resident ${fmt(peak, 0)} MiB: ${verdict(peak < RESIDENT_TARGET_MIB)}.`,
    `${largest} datasets, DCAT Turtle cold over JSON cold: ${fmt(ratio, 2)} (target ≤ ${DCAT_RATIO_TARGET}): ${verdict(ratioOk)}.`,
    '',
    `\`/health/live\` every 20 ms, ${sizes[0]} datasets: alone for 2 s, then while ${CONCURRENT_EXPORTS} first pages`,
    `(Turtle and JSON-LD) are exported at once (${fmt(live.exportsMs, 0)} ms). Target: slowest probe < ${LIVENESS_TARGET_MS} ms.`,
    '',
    table(
      ['liveness', 'probes', 'p50 ms', 'p99 ms', 'slowest ms'],
      [
        ['alone', live.idle],
        [`${CONCURRENT_EXPORTS} exports`, live.busy],
      ].map(([what, times]) => [
        what as string,
        (times as number[]).length,
        fmt(percentile(times as number[], 50), 1),
        fmt(percentile(times as number[], 99), 1),
        fmt(Math.max(...(times as number[])), 1),
      ]),
    ),
    '',
    `Slowest probe ${fmt(slowestProbe, 0)} ms: ${verdict(slowestProbe < LIVENESS_TARGET_MS)}.`,
    '',
    `Load average (1 min) of the 2-core machine at the start and end of the run: ${fmt(loadBefore, 1)} and ${fmt(loadavg()[0], 1)}:`,
    'the other work on the machine slows both exports, so compare the rows with each other.',
  ].join('\n');
  return { name: 'dcat', title: 'DCAT-AP export', markdown, targetsMet: ok };
}
