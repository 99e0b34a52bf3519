import { loadavg } from 'node:os';
import { deployedNodeArgs } from '../../lib/deployed-node-args';
import { BENCH_GLOBAL_KEY, startCatalog, withGeneratedCatalog } from '../lib/catalog-process';
import type { BenchContext } from '../lib/context';
import { startCeiling, timeGet } from '../lib/http-load';
import { cpuMs, processMemory } from '../lib/processes';
import { fmt, percentile, SuiteReport, table, verdict } from '../lib/report';

const RESIDENT_TARGET_MIB = 400;
/** The last records of the crawl read again, each answered from the fast-read index. */
const HELD_RECORDS = 2000;
const CONDITIONAL_P99_TARGET_MS = 5;
const MiB = 1024 * 1024;
/** The IRIs the records name (CATALOG_SOURCE of the bench catalog), read at the process's URL. */
const SOURCE = 'https://catalog.bench.example';

const ENV = {
  DCAT_PUBLISHER_NAME: 'Bench Institute',
  DCAT_CONTACT_EMAIL: 'catalog@bench.example',
  DCAT_HDAB_NAME: 'Bench HDAB',
  DCAT_HDAB_EMAIL: 'hdab@bench.example',
};
const KEY = { 'X-API-Key': BENCH_GLOBAL_KEY };

interface Crawl {
  ms: number;
  records: number;
  datasets: number;
  bytes: number;
  /** Each record read with its ETag (for the conditional GETs). */
  etags: Map<string, string>;
  /** The first dataset record's Turtle (the floor's body is made of it). */
  sample?: string;
}

/**
 * Breadth-first from /fdp over the records each record names (ldp:contains, and the catalog's
 * pages), in Turtle, one request at a time, as a harvester crawls an FDP.
 */
async function crawlFdp(url: string): Promise<Crawl> {
  const crawl: Crawl = { ms: 0, records: 0, datasets: 0, bytes: 0, etags: new Map() };
  const queue = [`${url}/fdp`];
  const seen = new Set(queue);
  while (queue.length > 0) {
    const next = queue.shift()!;
    const record = await readRecord(next);
    crawl.ms += record.ms;
    crawl.records++;
    crawl.bytes += Buffer.byteLength(record.body);
    if (next.includes('/fdp/dataset/')) {
      crawl.datasets++;
      crawl.sample ??= record.body;
    }
    crawl.etags.set(next, record.etag);
    for (const m of record.body.matchAll(LINKED)) {
      const target = `${url}${m[1]}`;
      if (!seen.has(target)) {
        seen.add(target);
        queue.push(target);
      }
    }
  }
  return crawl;
}

/** Links to the records a record names, in its Turtle. */
const LINKED =
  /<https:\/\/catalog\.bench\.example(\/fdp\/(?:catalog(?:\?page=\d+)?|dataset\/[^>#]+|distribution\/[^>#]+))>/g;

/** One record read as the crawl reads it: Turtle, the global key, the body whole, timed. */
async function readRecord(url: string): Promise<{ ms: number; body: string; etag: string }> {
  const started = performance.now();
  const res = await fetch(url, { headers: { ...KEY, Accept: 'text/turtle' } });
  const body = await res.text();
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  return { ms, body, etag: res.headers.get('etag') ?? '' };
}

/**
 * What one request per record costs at the least on this machine, in the same run: the crawl's
 * client reading (and scanning for links, as the crawl does), request by request, a bare Node
 * server (lib/ceiling-server.mjs) that answers each request with a record's bytes built once
 * (`sample` repeated to the crawl's mean record size); then the same client's conditional GETs
 * against the bare server answering 304. A target below these is below the floor of HTTP.
 */
async function requestFloors(
  ctx: BenchContext,
  crawl: Crawl,
  samples: number,
): Promise<{ perRequestMs: number; conditional: number[] }> {
  const meanBytes = Math.round(crawl.bytes / crawl.records);
  const sample = Buffer.from(crawl.sample ?? '');
  const body = Buffer.alloc(meanBytes, sample.length > 0 ? sample : ' ');
  const bare = await startCeiling(ctx.tempDir, body, 'text/turtle; charset=utf-8');
  let ms = 0;
  let links = 0;
  try {
    for (let i = 0; i < crawl.records; i++) {
      const record = await readRecord(`${bare.url}/fdp/dataset/${i}`);
      ms += record.ms;
      links += [...record.body.matchAll(LINKED)].length;
    }
    if (sample.length > 0 && links === 0) throw new Error('the floor read no links to scan');
  } finally {
    await bare.stop();
  }
  const notModified = await startCeiling(ctx.tempDir, Buffer.alloc(0), 'text/turtle', {
    notModified: true,
  });
  const conditional: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      const res = await timeGet(`${notModified.url}/fdp/dataset/${i}`, {
        ...KEY,
        Accept: 'text/turtle',
        'If-None-Match': '"ceiling"',
      });
      if (res.status !== 304) throw new Error(`the bare server answered ${res.status}`);
      conditional.push(res.ms);
    }
  } finally {
    await notModified.stop();
  }
  return { perRequestMs: ms / crawl.records, conditional };
}

/** Every page of GET /api/dcat in Turtle, following hydra:next (dcat.bench.ts reads it so). */
async function walkDcat(url: string): Promise<{ ms: number; bytes: number; pages: number }> {
  let next: string | undefined = `${url}/api/dcat?format=ttl`;
  const walk = { ms: 0, bytes: 0, pages: 0 };
  while (next !== undefined) {
    const res = await timeGet(next, KEY);
    if (res.status !== 200) throw new Error(`${next} answered ${res.status}`);
    walk.ms += res.ms;
    walk.bytes += res.body.length;
    walk.pages++;
    const link = /hydra:next <[^>]*page=(\d+)/.exec(res.body.toString());
    next = link === null ? undefined : `${url}/api/dcat?page=${link[1]}&format=ttl`;
  }
  return walk;
}

/**
 * If-None-Match on `samples` dataset records with the global key (the tag comes from the data
 * version: nothing is built to compare it), and anonymously on the root.
 */
async function conditionalGets(url: string, etags: Map<string, string>, samples: number) {
  const records = [...etags].filter(([u]) => u.includes('/fdp/dataset/'));
  const keyed: number[] = [];
  for (let i = 0; i < samples; i++) {
    const [u, etag] = records[i % records.length];
    const res = await timeGet(u, { ...KEY, Accept: 'text/turtle', 'If-None-Match': etag });
    if (res.status !== 304) throw new Error(`${u} answered ${res.status} to If-None-Match`);
    keyed.push(res.ms);
  }
  const first = await fetch(`${url}/fdp`, { headers: { Accept: 'text/turtle' } });
  const rootTag = first.headers.get('etag') ?? '';
  await first.text();
  const anonymous: number[] = [];
  for (let i = 0; i < samples; i++) {
    const res = await timeGet(`${url}/fdp`, { Accept: 'text/turtle', 'If-None-Match': rootTag });
    if (res.status !== 304) throw new Error(`/fdp answered ${res.status} to If-None-Match`);
    anonymous.push(res.ms);
  }
  return { keyed, anonymous };
}

/**
 * Keyed conditional GETs of dataset records that are in no index, through the framework and
 * with their tags derived in front of it, in the same run: two fresh catalog processes over the
 * same data (the same tags: they come from the data version, not from the process), one with
 * FAST_READS=false (every 304 takes the framework path) and one with ETAG_INDEX_MAX_ENTRIES=0
 * (no tag kept: each is derived). Each first answers every sampled record once (the framework's
 * 304, which identifies the key at this version; nothing goes to the fast-read index, which
 * keeps 200s), then the two are timed request by request in turn, so both see the same load.
 */
async function unheldConditionalGets(
  env: NodeJS.ProcessEnv,
  nodeArgs: string[],
  etags: Map<string, string>,
  crawledUrl: string,
  samples: number,
) {
  const records = [...etags]
    .filter(([u]) => u.includes('/fdp/dataset/'))
    .slice(0, 500)
    .map(([u, etag]) => ({ path: u.slice(crawledUrl.length), etag }));
  const before = await startCatalog({ ...env, FAST_READS: 'false' }, nodeArgs);
  const after = await startCatalog({ ...env, ETAG_INDEX_MAX_ENTRIES: '0' }, nodeArgs);
  try {
    const ask = async (url: string, r: (typeof records)[number]) => {
      const res = await timeGet(`${url}${r.path}`, {
        ...KEY,
        Accept: 'text/turtle',
        'If-None-Match': r.etag,
      });
      if (res.status !== 304) throw new Error(`${url}${r.path} answered ${res.status}`);
      return res.ms;
    };
    for (const r of records) {
      await ask(before.url, r);
      await ask(after.url, r);
    }
    const times = { before: [] as number[], after: [] as number[] };
    for (let i = 0; i < samples; i++) {
      const r = records[i % records.length];
      times.before.push(await ask(before.url, r));
      times.after.push(await ask(after.url, r));
    }
    return times;
  } finally {
    await before.stop();
    await after.stop();
  }
}

/**
 * The FAIR Data Point crawled from its root (every record: root, catalog pages, datasets,
 * distributions) between two walks of every page of GET /api/dcat over the same synthetic
 * catalog, per record and per dataset, with the catalog's CPU time; then conditional GETs
 * (If-None-Match) at p99; the catalog's peak resident set; and the floors of both, a bare server
 * read by the same client (`requestFloors`). `--fdp-datasets <n>` sets the
 * catalog's size (10,000 by default, 300 with --quick).
 */
export async function fdpBench(ctx: BenchContext): Promise<SuiteReport> {
  const datasets = ctx.fdpDatasets ?? (ctx.quick ? 300 : 10_000);
  const samples = ctx.quick ? 200 : 2000;
  const nodeArgs = deployedNodeArgs('catalog-api/deployment.yaml');
  const loadBefore = loadavg()[0];
  return withGeneratedCatalog(ctx, datasets, async (catalog) => {
    const prof = process.env.FDP_BENCH_CPU_PROF;
    const app = await startCatalog(
      { ...catalog.env, ...ENV, CATALOG_SOURCE: SOURCE },
      prof === undefined ? nodeArgs : [...nodeArgs, '--cpu-prof', `--cpu-prof-dir=${prof}`],
    );
    const pid = app.child.pid!;
    try {
      // /api/dcat before and after the crawl (the mean is compared): neither side runs first only.
      const dcatCpu = cpuMs(pid);
      const before = await walkDcat(app.url);
      const dcatCpuMs = cpuMs(pid) - dcatCpu;
      ctx.log(`${datasets} /api/dcat: ${fmt(before.ms, 0)} ms in ${before.pages} page(s)`);
      const fdpCpu = cpuMs(pid);
      const fdp = await crawlFdp(app.url);
      const fdpCpuMs = cpuMs(pid) - fdpCpu;
      ctx.log(`${datasets} /fdp crawl: ${fmt(fdp.ms, 0)} ms, ${fdp.records} records`);
      if (fdp.datasets !== datasets)
        throw new Error(`the crawl reached ${fdp.datasets} of ${datasets} datasets`);
      // The last records crawled, read again the same way: each is held in the fast-read index
      // (it was filed there by the read-ahead that built it), so this is what one request costs
      // the catalog when nothing is read or built: the part of a record's time that cheaper
      // building cannot remove.
      const heldUrls = [...fdp.etags.keys()].slice(-HELD_RECORDS);
      const heldCpu = cpuMs(pid);
      let heldMs = 0;
      for (const u of heldUrls) heldMs += (await readRecord(u)).ms;
      const held = { ms: heldMs, records: heldUrls.length, cpuMs: cpuMs(pid) - heldCpu };
      ctx.log(`${held.records} held records again: ${fmt(held.ms, 0)} ms`);
      const after = await walkDcat(app.url);
      ctx.log(`${datasets} /api/dcat again: ${fmt(after.ms, 0)} ms`);
      const dcat = { ...before, ms: (before.ms + after.ms) / 2 };
      const cond = await conditionalGets(app.url, fdp.etags, samples);
      const peakMiB = processMemory(pid, 'VmHWM') / MiB;
      const env = { ...catalog.env, ...ENV, CATALOG_SOURCE: SOURCE };
      const tags = await unheldConditionalGets(env, nodeArgs, fdp.etags, app.url, samples);
      const floor = await requestFloors(ctx, fdp, samples);
      ctx.log(`floor: ${fmt(floor.perRequestMs, 3)} ms per request from a bare server`);
      // A DCAT record is a dataset with its distributions; an FDP record is one resource.
      const perRecord = { fdp: fdp.ms / fdp.records, dcat: dcat.ms / datasets };
      const perDataset = { fdp: fdp.ms / fdp.datasets, dcat: dcat.ms / datasets };
      const p99 = {
        keyed: percentile(cond.keyed, 99),
        anonymous: percentile(cond.anonymous, 99),
      };
      const fastEnough = perRecord.fdp <= perRecord.dcat;
      const conditionalOk = Math.max(p99.keyed, p99.anonymous) < CONDITIONAL_P99_TARGET_MS;
      const memoryOk = peakMiB < RESIDENT_TARGET_MIB;
      const markdown = [
        '## FAIR Data Point crawl',
        '',
        `A synthetic catalog of ${datasets} datasets, the built catalog run as deployed (\`node ${nodeArgs.join(' ')}\`), global key.`,
        'FDP: breadth-first from `GET /fdp` over every record it names (catalog pages, datasets, distributions), Turtle,',
        'one request at a time; DCAT: every page of `GET /api/dcat` in Turtle (the same datasets, 1,000 a page), walked',
        'before and after the crawl (the mean; the two walks took ' +
          `${fmt(before.ms, 0)} and ${fmt(after.ms, 0)} ms). A record: one FDP resource (one request); in DCAT, a dataset`,
        'with its distributions. Per dataset: the FDP time to read a dataset and its distributions (its share of the',
        "catalog pages too). Catalog CPU: the catalog process's CPU time (all threads) over the read, per record; the",
        'machine is shared, so wall times move with its load and the CPU times less.',
        "Conditional GETs: `If-None-Match` with the record's ETag",
        `(${samples} each): dataset records with the global key and the root anonymously. Targets (issue 58): FDP per`,
        `record <= DCAT per record; conditional GET p99 < ${CONDITIONAL_P99_TARGET_MS} ms; peak resident < ${RESIDENT_TARGET_MIB} MiB.${ctx.quick || ctx.fdpDatasets !== undefined ? ' **Reduced size: not the real figure.**' : ''}`,
        '',
        table(
          [
            'read',
            'requests',
            'records',
            'MiB',
            'ms',
            'ms per record',
            'ms per dataset',
            'catalog CPU ms per record',
          ],
          [
            [
              'FDP crawl',
              fdp.records,
              fdp.records,
              fmt(fdp.bytes / MiB, 1),
              fmt(fdp.ms, 0),
              fmt(perRecord.fdp, 2),
              fmt(perDataset.fdp, 2),
              fmt(fdpCpuMs / fdp.records, 2),
            ],
            [
              `FDP, the last ${held.records} records again (held: nothing read or built)`,
              held.records,
              held.records,
              '',
              fmt(held.ms, 0),
              fmt(held.ms / held.records, 2),
              '',
              fmt(held.cpuMs / held.records, 2),
            ],
            [
              '/api/dcat',
              dcat.pages,
              datasets,
              fmt(dcat.bytes / MiB, 1),
              fmt(dcat.ms, 0),
              fmt(perRecord.dcat, 2),
              fmt(perDataset.dcat, 2),
              fmt(dcatCpuMs / datasets, 2),
            ],
          ],
        ),
        '',
        table(
          ['conditional GET (304)', 'p50 ms', 'p99 ms'],
          [
            ['dataset record, global key', fmt(percentile(cond.keyed, 50), 2), fmt(p99.keyed, 2)],
            ['root, anonymous', fmt(percentile(cond.anonymous, 50), 2), fmt(p99.anonymous, 2)],
            [
              'dataset record through the framework, global key, FAST_READS=false',
              fmt(percentile(tags.before, 50), 2),
              fmt(percentile(tags.before, 99), 2),
            ],
            [
              'the same in no index, tag derived, ETAG_INDEX_MAX_ENTRIES=0 (same run, in turn)',
              fmt(percentile(tags.after, 50), 2),
              fmt(percentile(tags.after, 99), 2),
            ],
            [
              'floor: a bare Node server answering 304, the same client',
              fmt(percentile(floor.conditional, 50), 2),
              fmt(percentile(floor.conditional, 99), 2),
            ],
          ],
        ),
        '',
        `Floor of one request per record (a bare Node server answering each request with ${fmt(fdp.bytes / fdp.records / 1024, 1)} KiB of a`,
        `dataset record, read and scanned for links by the same client, ${fdp.records} requests): ${fmt(floor.perRequestMs, 2)} ms per request,`,
        `${fmt(floor.perRequestMs / perRecord.dcat, 2)}× DCAT's time per record; the FDP per record is ${fmt(perRecord.fdp / floor.perRequestMs, 2)}× this floor.`,
        ...(floor.perRequestMs > perRecord.dcat
          ? [
              "The floor alone is above DCAT's time per record: no server answering one request per record meets the target on this machine in this run.",
            ]
          : []),
        `A record the catalog holds already (read and built before) takes ${fmt(held.ms / held.records, 2)} ms, ${fmt(held.ms / held.records / perRecord.dcat, 2)}× DCAT's time per`,
        `record: the catalog's cost of one request with nothing to read or build is ${fmt(held.ms / held.records - floor.perRequestMs, 2)} ms above the bare server's;`,
        `reading and building (the read-ahead, the catalog pages) add ${fmt(perRecord.fdp - held.ms / held.records, 2)} ms a record on average.`,
        '',
        `FDP per record / DCAT per record: ${fmt(perRecord.fdp / perRecord.dcat, 2)}: ${verdict(fastEnough)}` +
          ` (per dataset, ${fdp.records} requests for ${datasets} datasets: ${fmt(perDataset.fdp / perDataset.dcat, 2)}).`,
        `Conditional GET p99 ${fmt(p99.keyed, 2)} ms keyed, ${fmt(p99.anonymous, 2)} ms anonymous: ${verdict(conditionalOk)}.`,
        `Peak resident ${fmt(peakMiB, 0)} MiB: ${verdict(memoryOk)}.`,
        '',
        `Load average (1 min) at the start and end: ${fmt(loadBefore, 1)} and ${fmt(loadavg()[0], 1)}.`,
      ].join('\n');
      return {
        name: 'fdp',
        title: 'FAIR Data Point crawl',
        markdown,
        targetsMet: fastEnough && conditionalOk && memoryOk,
      };
    } finally {
      await app.stop();
    }
  });
}
