import { loadavg } from 'node:os';
import { DataSource } from 'typeorm';
import { DcatExporter } from '../../../apps/catalog-api/src/dcat/dcat.exporter';
import { DcatRepository } from '../../../apps/catalog-api/src/dcat/dcat.repository';
import { factsBatches } from '../../../apps/catalog-api/src/dcat/facts-batches';
import type { RdfNode } from '../../../apps/catalog-api/src/dcat/rdf-graph';
import { rdfWriter } from '../../../apps/catalog-api/src/dcat/rdf-writers';
import { buildTypeOrmOptions } from '../../../apps/catalog-api/src/typeorm-options';
import { deployedNodeArgs } from '../../lib/deployed-node-args';
import { BENCH_GLOBAL_KEY, startCatalog, withGeneratedCatalog } from '../lib/catalog-process';
import type { BenchContext } from '../lib/context';
import { timeGet } from '../lib/http-load';
import { withClient } from '../lib/bench-database';
import { cpuMs, processMemory, sleep } from '../lib/processes';
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
  /** The catalog process's CPU time over the read (all its threads). */
  cpuMs?: number;
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

/**
 * Forgets every stored JSON export (`dataset_exports`), so that the next read of
 * `GET /api/datasets` renders each export from the catalog's tables, as a DCAT read maps each
 * dataset from them: what "cold" means for both sides. Without it, the first JSON read's
 * background refresh stores the exports, and a later round's "cold" JSON read copies them.
 */
export async function forgetStoredExports(databaseUrl: string): Promise<void> {
  await withClient(databaseUrl, async (client) => {
    await client.query('TRUNCATE dataset_exports');
    const { rows } = await client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM dataset_exports',
    );
    if (rows[0].n !== 0) throw new Error('stored exports remain after TRUNCATE');
  });
}

/** How long the refresh after a cold JSON read may take to store every export. */
const REFRESH_DEADLINE_MS = 10 * 60_000;

/**
 * Waits (polling, with a deadline) until the catalog's background refresh, started by a cold
 * JSON read, has stored the export of each of the `datasets` and ended: the warm read then
 * copies stored exports, as it does in service, and does not share the machine with the
 * refresh.
 */
export async function exportsStored(url: string, databaseUrl: string, datasets: number) {
  const deadline = Date.now() + REFRESH_DEADLINE_MS;
  for (;;) {
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const refreshing = /^catalog_dataset_exports_refreshing(?:\{[^}]*\})? (\d+)$/m.exec(
      metrics,
    )?.[1];
    const stored = await withClient(databaseUrl, async (client) => {
      const { rows } = await client.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM dataset_exports',
      );
      return rows[0].n;
    });
    if (refreshing === '0' && stored === datasets) return;
    if (Date.now() > deadline)
      throw new Error(`${stored} of ${datasets} exports stored, refreshing ${refreshing}`);
    await sleep(200);
  }
}

/** The catalog's settings for the bench (DCAT_ENV, CATALOG_SOURCE, the default legislation). */
const FLOOR_EXPORTER = new DcatExporter({
  base: 'https://catalog.bench.example',
  publisherName: DCAT_ENV.DCAT_PUBLISHER_NAME,
  contactEmail: DCAT_ENV.DCAT_CONTACT_EMAIL,
  hdab: { name: DCAT_ENV.DCAT_HDAB_NAME, email: DCAT_ENV.DCAT_HDAB_EMAIL },
  applicableLegislation: ['http://data.europa.eu/eli/reg/2025/327/oj'],
});
const PAGE_SIZE = 1000;

interface Floors {
  /** Every page's facts read as the catalog reads them, nothing mapped. */
  readMs: number;
  /** The same facts mapped and written in Turtle by the catalog's exporter and writer, bare. */
  writeMs: number;
}

/**
 * What any DCAT Turtle export of this mapping must do, in parts, in the bench's process: read
 * every page's facts with the catalog's own statements (one REPEATABLE READ snapshot a page: the
 * page's ids and IRIs, facts in DcatService's batches (factsBatches: 100 datasets a statement,
 * then 300, the last at most 100), the count after the first, the next asked for ahead), then map and serialise them with the catalog's exporter and
 * Turtle writer and encode them to UTF-8, with no HTTP, no time slicing and no socket. The catalog overlaps the two (a
 * batch is written while the next is read): the longer of them is its floor.
 */
async function dcatFloors(databaseUrl: string): Promise<Floors> {
  const dataSource = new DataSource(
    buildTypeOrmOptions({ DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: 2 }),
  );
  await dataSource.initialize();
  const repo = new DcatRepository();
  const viewer = { kind: 'global' } as const;
  const floors: Floors = { readMs: 0, writeMs: 0 };
  try {
    for (let page = 1, last = 1; page <= last; page++) {
      let started = performance.now();
      const read = await dataSource.transaction('REPEATABLE READ', async (m) => {
        await repo.withoutJit(m);
        const { ids, accessions } = await repo.pageMembers(
          m,
          viewer,
          (page - 1) * PAGE_SIZE,
          PAGE_SIZE,
        );
        const slices = factsBatches(ids);
        const batches = [];
        let next = slices.length > 0 ? repo.facts(m, viewer, slices[0]) : undefined;
        // The count after the first batch, as the catalog asks for it (its page's head).
        const counted = repo.count(m, viewer);
        for (let i = 1; next !== undefined; i++) {
          const facts: Awaited<ReturnType<typeof repo.facts>> = await next;
          next = i < slices.length ? repo.facts(m, viewer, slices[i]) : undefined;
          batches.push(facts);
        }
        const total = await counted;
        last = Math.max(1, Math.ceil(total / PAGE_SIZE));
        return { info: { number: page, last, total }, accessions, batches };
      });
      floors.readMs += performance.now() - started;
      started = performance.now();
      const writer = rdfWriter('ttl', '');
      const iris = read.accessions.map((a) => FLOOR_EXPORTER.iris.dataset(a));
      const head: RdfNode[] =
        page === 1
          ? FLOOR_EXPORTER.catalogNodes(iris, read.info)
          : FLOOR_EXPORTER.catalogMembers(iris, read.info);
      let bytes = Buffer.byteLength(writer.start() + writer.nodes(head));
      for (const facts of read.batches)
        for (const dataset of facts)
          bytes += Buffer.from(writer.nodes(FLOOR_EXPORTER.datasetNodes(dataset))).length;
      bytes += Buffer.byteLength(writer.end());
      floors.writeMs += performance.now() - started;
      if (bytes === 0) throw new Error('the write floor wrote nothing');
    }
  } finally {
    await dataSource.destroy();
  }
  return floors;
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
const ROUNDS = 3;

/** One reader's rounds as one row: the mean times, the highest peak. */
function meanRow(runs: Row[]): Row {
  const mean = (walks: Walk[]): Walk => ({
    ...walks[0],
    ms: walks.reduce((sum, w) => sum + w.ms, 0) / walks.length,
    cpuMs: walks.reduce((sum, w) => sum + (w.cpuMs ?? 0), 0) / walks.length,
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
  const floors = new Map<number, Floors>();
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
          // A fresh process per reader: its cold read and its peak are its own. Cold for both
          // sides: nothing stored or cached, every dataset read from the tables.
          await forgetStoredExports(catalog.database.url);
          const app = await startCatalog({ ...catalog.env, ...DCAT_ENV }, nodeArgs);
          try {
            const pid = app.child.pid!;
            const coldCpu = cpuMs(pid);
            const cold = { ...(await read(app.url)), cpuMs: cpuMs(pid) - coldCpu };
            if (what.startsWith('JSON'))
              await exportsStored(app.url, catalog.database.url, datasets);
            const warm = await read(app.url);
            const peakMiB = processMemory(app.child.pid!, 'VmHWM') / MiB;
            runs.set(what, [...(runs.get(what) ?? []), { datasets, what, cold, warm, peakMiB }]);
            ctx.log(
              `${datasets} ${what} (round ${round + 1}): cold ${fmt(cold.ms, 0)} ms (catalog CPU ${fmt(cold.cpuMs, 0)} ms), warm ${fmt(warm.ms, 0)} ms, ${fmt(cold.bytes / MiB)} MiB in ${cold.pages} page(s), peak ${fmt(peakMiB, 0)} MiB, load ${fmt(loadavg()[0], 1)}`,
            );
          } finally {
            await app.stop();
          }
        }
      }
      for (const [what] of readers) rows.push(meanRow(runs.get(what)!));
      // The floors after the readers, once per round (the same data, the same load around).
      const parts: Floors[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const part = await dcatFloors(catalog.database.url);
        parts.push(part);
        ctx.log(
          `${datasets} floors (round ${round + 1}): read ${fmt(part.readMs, 0)} ms, write ${fmt(part.writeMs, 0)} ms, load ${fmt(loadavg()[0], 1)}`,
        );
      }
      floors.set(datasets, {
        readMs: parts.reduce((sum, f) => sum + f.readMs, 0) / parts.length,
        writeMs: parts.reduce((sum, f) => sum + f.writeMs, 0) / parts.length,
      });
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
  const floorOf = (datasets: number) => {
    const f = floors.get(datasets)!;
    return Math.max(f.readMs, f.writeMs);
  };
  const floorRatio = floorOf(largest) / json(largest).cold.ms;
  const ok = peak < RESIDENT_TARGET_MIB && slowestProbe < LIVENESS_TARGET_MS && ratioOk;
  const markdown = [
    '## DCAT-AP export',
    '',
    `Synthetic catalogs, the built catalog run as deployed (\`node ${nodeArgs.join(' ')}\`), global key. DCAT: every page of`,
    '`GET /api/dcat` (1,000 datasets a page) followed by `hydra:next` one after the other, as a harvester reads it; JSON:',
    '`GET /api/datasets`, the same datasets in one answer. Cold: the first read of a process just started, with no',
    "JSON export stored (the bench empties `dataset_exports` before every reader's process starts), so both sides",
    "read every dataset from the catalog's tables: the JSON renders each export in PostgreSQL, DCAT maps each",
    "dataset's facts. Warm: the same read again in the same process; for the JSON once the background refresh that",
    'the cold read started has stored every export (waited for), so it copies stored exports as in service, and',
    'DCAT, which stores nothing, reads the tables again. Ratio: DCAT time over JSON time.',
    "Catalog CPU: the catalog process's CPU time (all its threads) over the cold read, per dataset: the machine is",
    'shared, so wall times move with its load and the CPU times less.',
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
        'cold catalog CPU ms per dataset',
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
        fmt((r.cold.cpuMs ?? 0) / r.datasets, 3),
        fmt(r.peakMiB, 0),
      ]),
    ),
    '',
    `Peak resident ${fmt(peak, 0)} MiB: ${verdict(peak < RESIDENT_TARGET_MIB)}.`,
    `${largest} datasets, DCAT Turtle cold over JSON cold: ${fmt(ratio, 2)} (target ≤ ${DCAT_RATIO_TARGET}): ${verdict(ratioOk)}.`,
    '',
    "Floors, in the bench's process over the same catalog after the readers, each the mean of",
    `${ROUNDS} rounds: *read*, every page's facts read with the catalog's own statements (a REPEATABLE READ snapshot a`,
    'page: ids and IRIs, facts 100, then 300 datasets a statement, the last at most 100, the count after the first, with the next asked for ahead), nothing mapped; *write*, the',
    "same facts mapped and serialised in Turtle by the catalog's exporter and writer and encoded to UTF-8, bare (no",
    'HTTP, no slicing, no socket). The catalog writes a batch while it reads the next, so the longer of the two is the',
    'least its Turtle can take.',
    '',
    table(
      [
        'datasets',
        'read ms',
        'write ms',
        'floor ms',
        'floor / JSON cold',
        'DCAT Turtle cold / floor',
      ],
      sizes.map((datasets) => {
        const f = floors.get(datasets)!;
        const turtleCold = rows.find((r) => r.datasets === datasets && r.what === 'DCAT Turtle')!;
        return [
          datasets,
          fmt(f.readMs, 0),
          fmt(f.writeMs, 0),
          fmt(floorOf(datasets), 0),
          fmt(floorOf(datasets) / json(datasets).cold.ms, 2),
          fmt(turtleCold.cold.ms / floorOf(datasets), 2),
        ];
      }),
    ),
    '',
    `${largest} datasets: the floor alone is ${fmt(floorRatio, 2)}× the JSON cold time` +
      (ratioOk
        ? '.'
        : floorRatio > DCAT_RATIO_TARGET
          ? `, above the target: the floor stops it on this machine.`
          : `, below the target: the rest is the catalog's own (HTTP, slicing, the socket).`),
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
