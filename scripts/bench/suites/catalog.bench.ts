import { BENCH_GLOBAL_KEY, startCatalog, withGeneratedCatalog } from '../lib/catalog-process';
import type { BenchContext } from '../lib/context';
import { benchWrite, LoadResult, measure, startCeiling, timeGet } from '../lib/http-load';
import { sleep } from '../lib/processes';
import { fmt, SuiteReport, table, verdict } from '../lib/report';
import { metricSample } from '../../../test/support/prometheus-text';

const RATIO_TARGET = 0.8;
const COLD_TARGET_MS = 1000;
const CONNECTIONS = 8;
/** Issue 16 goal 6: reads of the list while one write a second lands, against the ceiling. */
const UNDER_WRITES_TARGET = 0.5;
const WRITE_INTERVAL_MS = 1000;

interface Case {
  path: string;
  keyKind: string;
  key: string;
}

interface CaseResult extends Case {
  coldMs: number;
  bodyBytes: number;
  items: number;
  app: LoadResult;
  /** The same app with FAST_READS=false: every read through Express, Nest and the interceptor. */
  framework: LoadResult;
  ceiling: LoadResult;
}

/** Reads under writes, one app configuration. */
interface UnderWrites {
  fastReads: boolean;
  load: LoadResult;
  ceiling: LoadResult;
  writes: number;
  builds: number;
  joined: number;
}

/** Counters of the read cache for `/api/datasets`, from the app's metrics. */
async function cacheCounts(url: string) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const sample = (name: string) => metricSample(text, name, { route: '/api/datasets' }) ?? 0;
  return {
    builds: sample('catalog_read_cache_builds_total'),
    joined: sample('catalog_read_cache_joined_total'),
  };
}

/**
 * 8 readers of `/api/datasets` (global key) for `seconds` while one write a second lands through
 * the same replica: every write makes the next reads cold, and they share one rebuild.
 */
async function readsUnderWrites(
  url: string,
  viewerId: number,
  seconds: number,
  writesSoFar: number,
): Promise<Omit<UnderWrites, 'fastReads' | 'ceiling'>> {
  const before = await cacheCounts(url);
  let writes = 0;
  let stop = false;
  const writer = (async () => {
    while (!stop) {
      const started = Date.now();
      await benchWrite(url, viewerId, writesSoFar + writes);
      writes += 1;
      await sleep(Math.max(0, WRITE_INTERVAL_MS - (Date.now() - started)));
    }
  })();
  const load = await measure({
    url: `${url}/api/datasets`,
    headers: { 'X-API-Key': BENCH_GLOBAL_KEY },
    connections: CONNECTIONS,
    durationSeconds: seconds,
  }).finally(() => (stop = true));
  await writer;
  const after = await cacheCounts(url);
  return { load, writes, builds: after.builds - before.builds, joined: after.joined - before.joined };
}

/** Mean of the rates, worst of the latencies, sum of the failures over alternating rounds. */
function combine(runs: LoadResult[]): LoadResult {
  const mean = (f: (r: LoadResult) => number) => runs.reduce((s, r) => s + f(r), 0) / runs.length;
  return {
    requestsPerSecond: mean((r) => r.requestsPerSecond),
    p50Ms: mean((r) => r.p50Ms),
    p99Ms: Math.max(...runs.map((r) => r.p99Ms)),
    requests: runs.reduce((s, r) => s + r.requests, 0),
    failures: runs.reduce((s, r) => s + r.failures, 0),
  };
}

export async function catalogBench(ctx: BenchContext): Promise<SuiteReport> {
  const datasets = ctx.quick ? 500 : 5000;
  const seconds = ctx.quick ? 2 : 5;
  const rounds = 2;
  return withGeneratedCatalog(ctx, datasets, async (catalog, generated, generateMs) => {
    const app = await startCatalog(catalog.env);
    const framework = await startCatalog({ ...catalog.env, FAST_READS: 'false' });
    const results: CaseResult[] = [];
    const underWrites: UnderWrites[] = [];
    try {
      const cases: Case[] = [];
      for (const path of ['/api/datasets', '/api/projects']) {
        cases.push({ path, keyKind: 'global', key: BENCH_GLOBAL_KEY });
        cases.push({ path, keyKind: 'user', key: generated.userKey });
        cases.push({ path, keyKind: 'endpoint', key: generated.endpointKey });
      }
      for (const c of cases) {
        const headers = { 'X-API-Key': c.key };
        // Cold: the first request of this caller on a freshly started process (empty cache).
        const cold = await timeGet(app.url + c.path, headers);
        if (cold.status !== 200) throw new Error(`${c.path} (${c.keyKind}) answered ${cold.status}`);
        const items = (JSON.parse(cold.body.toString()) as { items: unknown[] }).items.length;
        const ceiling = await startCeiling(ctx.tempDir, cold.body, cold.contentType);
        try {
          await measure({ url: app.url + c.path, headers, connections: CONNECTIONS, durationSeconds: 1 });
          await measure({ url: framework.url + c.path, headers, connections: CONNECTIONS, durationSeconds: 1 });
          await measure({ url: ceiling.url + c.path, connections: CONNECTIONS, durationSeconds: 1 });
          const appRuns: LoadResult[] = [];
          const frameworkRuns: LoadResult[] = [];
          const ceilingRuns: LoadResult[] = [];
          for (let round = 0; round < rounds; round++) {
            ceilingRuns.push(await measure({ url: ceiling.url + c.path, connections: CONNECTIONS, durationSeconds: seconds }));
            appRuns.push(await measure({ url: app.url + c.path, headers, connections: CONNECTIONS, durationSeconds: seconds }));
            frameworkRuns.push(await measure({ url: framework.url + c.path, headers, connections: CONNECTIONS, durationSeconds: seconds }));
          }
          const result = {
            ...c,
            coldMs: cold.ms,
            bodyBytes: cold.body.length,
            items,
            app: combine(appRuns),
            framework: combine(frameworkRuns),
            ceiling: combine(ceilingRuns),
          };
          results.push(result);
          ctx.log(
            `${c.path} ${c.keyKind}: cold ${fmt(cold.ms)} ms, ${items} items, ` +
              `${fmt(result.app.requestsPerSecond)} (FAST_READS=false ${fmt(result.framework.requestsPerSecond)}) ` +
              `vs ${fmt(result.ceiling.requestsPerSecond)} req/s ` +
              `(${fmt(result.app.requestsPerSecond / result.ceiling.requestsPerSecond, 2)}x)`,
          );
          if (c.path === '/api/datasets' && c.keyKind === 'global') {
            let writes = 0;
            for (const [fastReads, target] of [[true, app], [false, framework]] as const) {
              const ceilingLoad = await measure({ url: ceiling.url + c.path, connections: CONNECTIONS, durationSeconds: seconds });
              const run = await readsUnderWrites(target.url, generated.viewerId, seconds * rounds, writes);
              writes += run.writes;
              underWrites.push({ fastReads, ceiling: ceilingLoad, ...run });
              ctx.log(
                `under writes (FAST_READS=${fastReads}): ${fmt(run.load.requestsPerSecond)} vs ${fmt(ceilingLoad.requestsPerSecond)} req/s, ` +
                  `${run.writes} writes, ${run.builds} builds, ${run.joined} joined`,
              );
            }
          }
        } finally {
          await ceiling.stop();
        }
      }
      return report(datasets, generated.projects, generateMs, app.readyAfterMs, results, underWrites, ctx.quick);
    } finally {
      await app.stop();
      await framework.stop();
    }
  });
}

const underWritesOk = (u: UnderWrites) =>
  u.load.requestsPerSecond / u.ceiling.requestsPerSecond >= UNDER_WRITES_TARGET && u.load.failures === 0;

function report(
  datasets: number,
  projects: number,
  generateMs: number,
  startMs: number,
  results: CaseResult[],
  underWrites: UnderWrites[],
  quick: boolean,
): SuiteReport {
  const rows = results.map((r) => {
    const ratio = r.app.requestsPerSecond / r.ceiling.requestsPerSecond;
    const ok = ratio >= RATIO_TARGET && r.coldMs < COLD_TARGET_MS && r.app.failures === 0;
    return {
      ok,
      cells: [
        `\`GET ${r.path}\``,
        r.keyKind,
        r.items,
        fmt(r.bodyBytes / 1024 / 1024, 2),
        fmt(r.coldMs, 0),
        fmt(r.app.requestsPerSecond),
        `${fmt(r.app.p50Ms)} / ${fmt(r.app.p99Ms)}`,
        fmt(r.ceiling.requestsPerSecond),
        `${fmt(r.ceiling.p50Ms)} / ${fmt(r.ceiling.p99Ms)}`,
        `**${fmt(ratio, 2)}×**`,
        fmt(r.framework.requestsPerSecond),
        `${fmt(r.framework.requestsPerSecond / r.ceiling.requestsPerSecond, 2)}×`,
        r.app.failures,
        verdict(ok),
      ],
    };
  });
  const markdown = [
    '## Catalog lists',
    '',
    `${datasets} datasets from the catalog's synthetic generator (\`npm run gen-data\`: ${projects} projects; two declarations,`,
    'two custodians, two storages each, all exposed to its endpoint); the bench user holds `protected` on every fourth project.',
    `Generated in ${fmt(generateMs / 1000)} s; the built app (\`nest build\` output in .bench/dist, run with \`node …/main.js\`, LOG_LEVEL=warn) was ready ${fmt(startMs, 0)} ms after spawn.`,
    `autocannon, ${CONNECTIONS} connections, alternating rounds of ceiling, app and the same app with FAST_READS=false (every`,
    'read through Express, Nest and the read-cache interceptor), against a bare `node:http` server in its own process returning',
    'the same bytes from memory (the ceiling). Cold = first request of that caller after start (empty cache).',
    `Targets: ≥ ${RATIO_TARGET}× the ceiling once warm, cold < ${COLD_TARGET_MS} ms.${quick ? ' **Quick mode: not a real figure.**' : ''}`,
    '',
    table(
      ['request', 'key', 'items', 'MiB', 'cold ms', 'app req/s', 'app p50/p99 ms', 'ceiling req/s', 'ceiling p50/p99 ms', 'ratio', 'FAST_READS=false req/s', 'its ratio', 'errors', 'target'],
      rows.map((r) => r.cells),
    ),
    '',
    `**Reads under writes.** ${CONNECTIONS} readers of \`GET /api/datasets\` (global key) while one write a second`,
    '(`PATCH /api/admin/users/:id` through the same replica) changes the data version, so the next reads after each write are cold',
    `and share one rebuild (builds: answers built; joined: cold reads that waited for a build running). Target ≥ ${UNDER_WRITES_TARGET}× the ceiling.`,
    '',
    table(
      ['FAST_READS', 'req/s', 'p50/p99 ms', 'ceiling req/s', 'ratio', 'writes', 'builds', 'joined', 'errors', 'target'],
      underWrites.map((u) => {
        const ratio = u.load.requestsPerSecond / u.ceiling.requestsPerSecond;
        return [
          String(u.fastReads),
          fmt(u.load.requestsPerSecond),
          `${fmt(u.load.p50Ms)} / ${fmt(u.load.p99Ms)}`,
          fmt(u.ceiling.requestsPerSecond),
          `**${fmt(ratio, 2)}×**`,
          u.writes,
          u.builds,
          u.joined,
          u.load.failures,
          verdict(underWritesOk(u)),
        ];
      }),
    ),
  ].join('\n');
  const targetsMet = rows.every((r) => r.ok) && underWrites.filter((u) => u.fastReads).every(underWritesOk);
  return { name: 'catalog', title: 'Catalog lists', markdown, targetsMet };
}
