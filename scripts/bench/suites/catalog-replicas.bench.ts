import { randomBytes } from 'node:crypto';
import { startPrivatePgBouncer, PrivatePgBouncer } from '../../lib/private-pgbouncer';
import { measureReplicaStaleness, StalenessSample } from '../../lib/replica-staleness';
import { benchServerUrl, withClient } from '../lib/bench-database';
import {
  BENCH_GLOBAL_KEY,
  BenchCatalog,
  startCatalog,
  withGeneratedCatalog,
} from '../lib/catalog-process';
import type { BenchContext } from '../lib/context';
import { LoadResult, measure } from '../lib/http-load';
import { sleep } from '../lib/processes';
import { fmt, percentile, SuiteReport, table, verdict } from '../lib/report';

/** Client connections of every load, however many replicas share them. */
const CONNECTIONS = 9;
/** Server connections PgBouncer keeps per database (`default_pool_size`). */
const POOLER_POOL_SIZE = 10;
/** Goal: a write through one replica is read on the others within this, at the 99th percentile. */
const STALENESS_P99_TARGET_MS = 1000;
const WRITE_INTERVAL_MS = 1000;

interface Read {
  label: string;
  path: string;
}

/** A read served from memory once warm, and one that asks PostgreSQL every time. */
const READS: Read[] = [
  { label: '`GET /api/projects` (cached)', path: '/api/projects' },
  // One indexed query each (the audit trail is never cached): where a pooler's hop shows.
  {
    label: '`GET /api/admin/audit?object=dataset:1` (a query each)',
    path: '/api/admin/audit?object=dataset:1',
  },
];

interface Setup {
  label: string;
  replicas: number;
  pooled: boolean;
}

const SETUPS: Setup[] = [
  { label: '1 replica, direct', replicas: 1, pooled: false },
  { label: '1 replica behind PgBouncer', replicas: 1, pooled: true },
  { label: '3 replicas behind PgBouncer', replicas: 3, pooled: true },
];

interface Row {
  setup: Setup;
  read: Read;
  load: LoadResult;
  /** Most server connections the database had for this catalog during the load. */
  serverConnections: number;
}

/** Client backends of `database` now (the catalog's pools, or PgBouncer's server connections). */
async function backendsOf(database: string): Promise<number> {
  return withClient(`${benchServerUrl()}/postgres`, async (client) => {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = $1 AND backend_type = 'client backend'`,
      [database],
    );
    return rows[0].n;
  });
}

/** One load spread over the replicas (each its share of the connections), summed. */
async function spread(urls: string[], path: string, seconds: number): Promise<LoadResult> {
  const runs = await Promise.all(
    urls.map((url, i) =>
      measure({
        url: url + path,
        headers: { 'X-API-Key': BENCH_GLOBAL_KEY },
        connections:
          Math.floor(CONNECTIONS / urls.length) + (i < CONNECTIONS % urls.length ? 1 : 0),
        durationSeconds: seconds,
      }),
    ),
  );
  return {
    requestsPerSecond: runs.reduce((s, r) => s + r.requestsPerSecond, 0),
    p50Ms: Math.max(...runs.map((r) => r.p50Ms)),
    p99Ms: Math.max(...runs.map((r) => r.p99Ms)),
    requests: runs.reduce((s, r) => s + r.requests, 0),
    failures: runs.reduce((s, r) => s + r.failures, 0),
  };
}

/** One setup's rounds as one row: mean rate, worst latencies and connections, all failures. */
function combine(runs: Row[]): Row {
  const loads = runs.map((r) => r.load);
  return {
    setup: runs[0].setup,
    read: runs[0].read,
    load: {
      requestsPerSecond: loads.reduce((s, l) => s + l.requestsPerSecond, 0) / loads.length,
      p50Ms: Math.max(...loads.map((l) => l.p50Ms)),
      p99Ms: Math.max(...loads.map((l) => l.p99Ms)),
      requests: loads.reduce((s, l) => s + l.requests, 0),
      failures: loads.reduce((s, l) => s + l.failures, 0),
    },
    serverConnections: Math.max(...runs.map((r) => r.serverConnections)),
  };
}

/** Starts `setup`'s replicas on the catalog's database, directly or through `pooler`. */
async function startReplicas(catalog: BenchCatalog, setup: Setup, pooler: PrivatePgBouncer) {
  const env = setup.pooled
    ? {
        ...catalog.env,
        DATABASE_URL: `${pooler.serverUrl}/${catalog.database.name}`,
        DATABASE_DIRECT_URL: catalog.database.url,
      }
    : catalog.env;
  return Promise.all(Array.from({ length: setup.replicas }, () => startCatalog(env)));
}

export async function catalogReplicasBench(ctx: BenchContext): Promise<SuiteReport> {
  const datasets = ctx.quick ? 200 : 2000;
  const seconds = ctx.quick ? 2 : 5;
  const writes = ctx.quick ? 5 : 60;
  const rounds = ctx.quick ? 1 : 3;
  const pooler = await startPrivatePgBouncer({
    postgresServerUrl: benchServerUrl(),
    poolSize: POOLER_POOL_SIZE,
  });
  try {
    return await withGeneratedCatalog(ctx, datasets, async (catalog) => {
      const runs: Row[] = [];
      let staleness: StalenessSample[] = [];
      // Rounds in alternating order (direct first, then last), so the machine's other work
      // weighs on every setup alike; each setup's replicas are started afresh for its turn.
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? SETUPS : [...SETUPS].reverse();
        for (const setup of order) {
          // Nothing of the last setup left (PgBouncer closes idle server connections after 5 s)
          // before this one's connections are counted.
          for (
            let waited = 0;
            (await backendsOf(catalog.database.name)) > 0 && waited < 30;
            waited++
          )
            await sleep(1_000);
          const replicas = await startReplicas(catalog, setup, pooler);
          try {
            const urls = replicas.map((r) => r.url);
            for (const read of READS) {
              await spread(urls, read.path, 1); // warm-up: caches, pools, JIT
              let serverConnections = 0;
              let sampling = true;
              const sampler = (async () => {
                while (sampling) {
                  serverConnections = Math.max(
                    serverConnections,
                    await backendsOf(catalog.database.name),
                  );
                  await sleep(200);
                }
              })();
              const load = await spread(urls, read.path, seconds).finally(() => (sampling = false));
              await sampler;
              runs.push({ setup, read, load, serverConnections });
              ctx.log(
                `round ${round + 1}, ${setup.label}, ${read.path}: ${fmt(load.requestsPerSecond)} req/s, ` +
                  `p99 ${fmt(load.p99Ms)} ms, ${serverConnections} server connections`,
              );
            }
            if (setup.replicas === 3 && round === 0) {
              staleness = await measureReplicaStaleness({
                urls,
                key: BENCH_GLOBAL_KEY,
                writes,
                intervalMs: WRITE_INTERVAL_MS,
                deadlineMs: 10_000,
                tag: randomBytes(3).toString('hex'),
              });
              const delays = staleness.map((s) => s.delayMs);
              ctx.log(
                `staleness over ${delays.length} reads: p50 ${fmt(percentile(delays, 50))} ms, ` +
                  `p99 ${fmt(percentile(delays, 99))} ms`,
              );
            }
          } finally {
            await Promise.all(replicas.map((r) => r.stop()));
          }
        }
      }
      const rows = SETUPS.flatMap((setup) =>
        READS.map((read) => combine(runs.filter((r) => r.setup === setup && r.read === read))),
      );
      return report(datasets, writes, seconds, rounds, rows, staleness, ctx.quick);
    });
  } finally {
    await pooler.stop();
  }
}

function report(
  datasets: number,
  writes: number,
  seconds: number,
  rounds: number,
  rows: Row[],
  staleness: StalenessSample[],
  quick: boolean,
): SuiteReport {
  const direct = (read: Read) =>
    rows.find((r) => r.read === read && !r.setup.pooled)!.load.requestsPerSecond;
  const delays = staleness.map((s) => s.delayMs);
  const p99 = percentile(delays, 99);
  const staleReads = staleness.reduce((sum, s) => sum + s.staleReads, 0);
  const stalenessOk = p99 < STALENESS_P99_TARGET_MS;
  const markdown = [
    '## Catalog replicas behind PgBouncer',
    '',
    `${datasets} generated datasets; the built catalog (\`node …/main.js\`, default pool of 10) directly on PostgreSQL, or`,
    `behind Debian's PgBouncer in transaction mode (\`default_pool_size = ${POOLER_POOL_SIZE}\`, the configuration of`,
    '[operations](operations.md#pgbouncer)) with `DATABASE_DIRECT_URL` for the version listener. autocannon,',
    `${CONNECTIONS} connections in all (shared out over the replicas), ${rounds} rounds of ${seconds} s per figure, the setups in`,
    'alternating order and freshly started for each, after 1 s of warm-up: the mean rate, the worst latencies. Server connections:',
    "the most client backends PostgreSQL had for the catalog database meanwhile (the replicas' pools, or PgBouncer's, and each",
    "replica's version listener).",
    'Everything runs on the one machine below: the replicas, the load generator, PgBouncer and PostgreSQL share its cores,',
    `so more replicas add processes competing for them, not capacity.${quick ? ' **Quick mode: not a real figure.**' : ''}`,
    '',
    table(
      ['setup', 'read', 'req/s', 'vs 1 direct', 'p50 / p99 ms', 'server connections', 'errors'],
      rows.map((r) => [
        r.setup.label,
        r.read.label,
        fmt(r.load.requestsPerSecond),
        `${fmt(r.load.requestsPerSecond / direct(r.read), 2)}×`,
        `${fmt(r.load.p50Ms)} / ${fmt(r.load.p99Ms)}`,
        r.serverConnections,
        r.load.failures,
      ]),
    ),
    '',
    `**Staleness across replicas.** Three replicas behind PgBouncer; ${writes} writes, one a second, each through the`,
    'next replica (`POST /api/admin/users`); once a write is answered, each other replica is read back to back',
    "(`GET /api/users`, a cached read answered from memory) until a read holds it. Delay: from the write's answer to the",
    'end of that read; stale reads: reads begun after the write was answered that did not hold it yet.',
    `Goal: p99 < ${STALENESS_P99_TARGET_MS} ms.`,
    '',
    table(
      ['reads measured', 'p50 ms', 'p99 ms', 'max ms', 'stale reads', 'target'],
      [
        [
          delays.length,
          fmt(percentile(delays, 50)),
          fmt(p99),
          fmt(Math.max(...delays)),
          staleReads,
          verdict(stalenessOk),
        ],
      ],
    ),
  ].join('\n');
  const failures = rows.some((r) => r.load.failures > 0);
  return {
    name: 'catalog-replicas',
    title: 'Catalog replicas behind PgBouncer',
    markdown,
    targetsMet: stalenessOk && !failures,
  };
}
