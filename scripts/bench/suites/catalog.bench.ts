import { generateCatalog } from '../data/catalog-data';
import { BENCH_GLOBAL_KEY, migratedCatalogDatabase, startCatalog } from '../lib/catalog-process';
import type { BenchContext } from '../lib/context';
import { LoadResult, measure, startCeiling, timeGet } from '../lib/http-load';
import { fmt, SuiteReport, table, verdict } from '../lib/report';

const RATIO_TARGET = 0.8;
const COLD_TARGET_MS = 1000;
const CONNECTIONS = 8;

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
  ceiling: LoadResult;
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
  const catalog = await migratedCatalogDatabase();
  try {
    const started = performance.now();
    const generated = await generateCatalog(catalog.database.url, datasets);
    const generateMs = performance.now() - started;
    ctx.log(`generated ${datasets} datasets in ${fmt(generateMs / 1000)} s`);

    const app = await startCatalog(catalog.env);
    const results: CaseResult[] = [];
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
          await measure({ url: ceiling.url + c.path, connections: CONNECTIONS, durationSeconds: 1 });
          const appRuns: LoadResult[] = [];
          const ceilingRuns: LoadResult[] = [];
          for (let round = 0; round < rounds; round++) {
            ceilingRuns.push(await measure({ url: ceiling.url + c.path, connections: CONNECTIONS, durationSeconds: seconds }));
            appRuns.push(await measure({ url: app.url + c.path, headers, connections: CONNECTIONS, durationSeconds: seconds }));
          }
          const result = { ...c, coldMs: cold.ms, bodyBytes: cold.body.length, items, app: combine(appRuns), ceiling: combine(ceilingRuns) };
          results.push(result);
          ctx.log(
            `${c.path} ${c.keyKind}: cold ${fmt(cold.ms)} ms, ${items} items, ` +
              `${fmt(result.app.requestsPerSecond)} vs ${fmt(result.ceiling.requestsPerSecond)} req/s ` +
              `(${fmt(result.app.requestsPerSecond / result.ceiling.requestsPerSecond, 2)}x)`,
          );
        } finally {
          await ceiling.stop();
        }
      }
      return report(datasets, generated.projects, generateMs, app.readyAfterMs, results, ctx.quick);
    } finally {
      await app.stop();
    }
  } finally {
    await catalog.database.drop();
  }
}

function report(datasets: number, projects: number, generateMs: number, startMs: number, results: CaseResult[], quick: boolean): SuiteReport {
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
    `autocannon, ${CONNECTIONS} connections, alternating rounds of app and ceiling (a bare \`node:http\` server in its own`,
    'process returning the same bytes from memory). Cold = first request of that caller after start (empty cache).',
    `Targets: ≥ ${RATIO_TARGET}× the ceiling once warm, cold < ${COLD_TARGET_MS} ms.${quick ? ' **Quick mode: not a real figure.**' : ''}`,
    '',
    table(
      ['request', 'key', 'items', 'MiB', 'cold ms', 'app req/s', 'app p50/p99 ms', 'ceiling req/s', 'ceiling p50/p99 ms', 'ratio', 'errors', 'target'],
      rows.map((r) => r.cells),
    ),
  ].join('\n');
  return { name: 'catalog', title: 'Catalog lists', markdown, targetsMet: rows.every((r) => r.ok) };
}
