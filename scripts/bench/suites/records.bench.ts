import { createPostgresBackend, Job, JobType, Queue, Worker } from 'bullmq';
import { join } from 'node:path';
import { startPrivateRedis } from '../../lib/private-redis';
import { fillImportRecords } from '../data/import-records-data';
import { createBenchDatabase } from '../lib/bench-database';
import type { BenchContext } from '../lib/context';
import { measure, timeGet } from '../lib/http-load';
import { BENCH_WRITE_KEY, provisionerEnv, startProvisionerApi } from '../lib/provisioner-process';
import { fmt, SuiteReport, table, verdict } from '../lib/report';

/**
 * Ours against the queue dashboard's own API for the same page: p99 at most this ratio, or
 * under FAST_ENOUGH_MS (a few milliseconds of difference between two fast answers is noise).
 */
const TARGET_RATIO = 1.2;
const FAST_ENOUGH_MS = 100;
const CONNECTIONS = 20;
const PREFIX = 'bench';
const QUEUE = 'imports';

const dashboard = (status: string, page = 1) =>
  `/admin/queues/api/queues?activeQueue=${QUEUE}&status=${status}&page=${page}&jobsPerPage=50`;

/**
 * The listings measured, each beside what an operator would ask the queue dashboard (bull-board,
 * served by the same API) for the same page: first and deep pages, each filter. The dashboard
 * cannot tell rejected from failed imports nor filter by source: its nearest page stands in.
 */
const QUERIES: { label: string; ours: string; theirs: string }[] = [
  { label: 'newest page', ours: '/imports', theirs: dashboard('latest') },
  { label: 'imported', ours: '/imports?state=imported', theirs: dashboard('completed') },
  { label: 'imported, page 500', ours: '/imports?state=imported&page=500', theirs: dashboard('completed', 500) },
  { label: 'page 1,000 (offset 50,000)', ours: '/imports?page=1000', theirs: dashboard('completed', 1000) },
  { label: 'rejected', ours: '/imports?state=rejected', theirs: dashboard('failed') },
  { label: 'queued', ours: '/imports?state=queued', theirs: dashboard('waiting') },
  { label: 'failed of one source', ours: '/imports?source=bench&state=failed', theirs: dashboard('failed') },
];

interface BackendRow {
  backend: string;
  fillS: number;
  firstMs: number;
  perQuery: {
    label: string;
    ours: { rps: number; p50: number; p99: number; failures: number };
    theirs: { rps: number; p50: number; p99: number; failures: number };
  }[];
  /** The listing as it was: every import job read and sorted, on every call. */
  everyJobMs: number;
  /** One page of one state as BullMQ's own getters (what the queue dashboard shows). */
  dashboardMs: number;
}

/** The old GET /imports: every job of every state read, sorted in memory (one call). */
async function readEveryJob(queue: Queue): Promise<number> {
  const started = performance.now();
  const jobs: Job[] = [];
  for (const state of ['waiting', 'delayed', 'prioritized', 'waiting-children', 'active', 'completed', 'failed'])
    jobs.push(...(await queue.getJobs([state as JobType], 0, -1)));
  jobs.sort((a, b) => b.timestamp - a.timestamp);
  return performance.now() - started;
}

async function dashboardPage(queue: Queue): Promise<number> {
  const started = performance.now();
  await Promise.all([queue.getJobs(['completed'], 0, 49, false), queue.getJobCounts()]);
  return performance.now() - started;
}

async function measureBackend(
  ctx: BenchContext,
  backend: 'redis' | 'postgres',
  total: number,
  seconds: number,
): Promise<BackendRow> {
  const base = join(ctx.tempDir, `records-${backend}`);
  const redis = backend === 'redis' ? await startPrivateRedis({ dir: join(base, 'redis') }) : null;
  const database = backend === 'postgres' ? await createBenchDatabase('records') : null;
  const pgConnection = database && { connectionString: database.url, schema: `bullmq_${PREFIX}`, migrate: true };
  // One Queue API whatever the backend (the provisioner types it the same way).
  const queue = (
    redis
      ? new Queue(QUEUE, { connection: { host: '127.0.0.1', port: redis.port }, prefix: PREFIX })
      : new Queue(QUEUE, { connection: pgConnection!, prefix: PREFIX }, createPostgresBackend)
  ) as unknown as Queue;
  try {
    const started = performance.now();
    await fillImportRecords(
      queue,
      (processor) =>
        redis
          ? new Worker(QUEUE, processor, { connection: { host: '127.0.0.1', port: redis.port }, prefix: PREFIX, concurrency: 50 })
          : (new Worker(QUEUE, processor, { connection: pgConnection!, prefix: PREFIX, concurrency: 50 }, createPostgresBackend) as unknown as Worker),
      total,
    );
    const fillS = (performance.now() - started) / 1000;
    ctx.log(`records/${backend}: ${total} import jobs made in ${fmt(fillS, 0)} s`);
    const api = await startProvisionerApi(
      provisionerEnv({
        redisUrl: redis?.url,
        databaseUrl: database?.url,
        dropzone: join(base, 'dropzone'),
        storage: join(base, 'storage'),
      }),
    );
    try {
      const headers = { 'X-API-Key': BENCH_WRITE_KEY };
      const first = await timeGet(`${api.url}/imports`, headers);
      const body = JSON.parse(first.body.toString()) as { count: number };
      if (first.status !== 200 || body.count !== total)
        throw new Error(`GET /imports answered ${first.status} with count ${body.count}, not ${total}`);
      const perQuery: BackendRow['perQuery'] = [];
      const load = async (path: string) => {
        const r = await measure({ url: api.url, headers, paths: [path], connections: CONNECTIONS, durationSeconds: seconds });
        return { rps: r.requestsPerSecond, p50: r.p50Ms, p99: r.p99Ms, failures: r.failures };
      };
      for (const [i, { label, ours, theirs }] of QUERIES.entries()) {
        // Alternating which goes first, so a drift of the machine's load does not favour one.
        const first = await load(i % 2 === 0 ? ours : theirs);
        const second = await load(i % 2 === 0 ? theirs : ours);
        const [o, t] = i % 2 === 0 ? [first, second] : [second, first];
        perQuery.push({ label, ours: o, theirs: t });
        ctx.log(`records/${backend} ${label}: ours p50 ${o.p50} p99 ${o.p99} ms (${fmt(o.rps, 0)}/s); dashboard p50 ${t.p50} p99 ${t.p99} ms (${fmt(t.rps, 0)}/s)`);
      }
      const dashboardMs = Math.min(...(await Promise.all([0, 1, 2].map(() => dashboardPage(queue)))));
      const everyJobMs = await readEveryJob(queue);
      ctx.log(`records/${backend}: every job read and sorted ${fmt(everyJobMs, 0)} ms; dashboard page ${fmt(dashboardMs, 1)} ms`);
      return { backend, fillS, firstMs: first.ms, perQuery, everyJobMs, dashboardMs };
    } finally {
      await api.stop();
    }
  } finally {
    await queue.close();
    await redis?.stop();
    await database?.drop();
  }
}

export async function recordsBench(ctx: BenchContext): Promise<SuiteReport> {
  const total = ctx.quick ? 5_000 : 100_000;
  const seconds = ctx.quick ? 2 : 5;
  const rows: BackendRow[] = [];
  for (const backend of ['redis', 'postgres'] as const) rows.push(await measureBackend(ctx, backend, total, seconds));
  const ratio = (q: BackendRow['perQuery'][number]) => q.ours.p99 / Math.max(1, q.theirs.p99);
  const met = rows.every((r) =>
    r.perQuery.every(
      (q) => (ratio(q) <= TARGET_RATIO || q.ours.p99 < FAST_ENOUGH_MS) && q.ours.failures === 0,
    ),
  );
  const markdown = [
    '## Import records',
    '',
    `\`GET /imports\` on the built provisioner API over ${total.toLocaleString('en')} import records (90 % imported, 5 % rejected,`,
    '3 % failed, 2 % queued; two sources), on each queue backend, against the queue dashboard (bull-board\'s JSON API, served',
    'by the same process) asked for the same page of 50. The jobs are made by a BullMQ worker as the provisioner\'s worker leaves',
    'them; the API indexes them on its first listing (on Redis: the one-time cost of a queue older than the index).',
    `autocannon, ${CONNECTIONS} connections, ${seconds} s per query, the two sides alternating. Target: p99 at most ${TARGET_RATIO}× the dashboard's, or under ${FAST_ENOUGH_MS} ms.`,
    ctx.quick ? '**Quick mode: not a real figure.**' : '',
    '',
    table(
      ['backend', 'query', 'ours req/s', 'ours p50 / p99 ms', 'dashboard req/s', 'dashboard p50 / p99 ms', 'p99 ratio', 'errors'],
      rows.flatMap((r) =>
        r.perQuery.map((q) => [
          r.backend,
          q.label,
          fmt(q.ours.rps, 0),
          `${fmt(q.ours.p50, 0)} / ${fmt(q.ours.p99, 0)}`,
          fmt(q.theirs.rps, 0),
          `${fmt(q.theirs.p50, 0)} / ${fmt(q.theirs.p99, 0)}`,
          `**${fmt(ratio(q), 2)}×**`,
          q.ours.failures,
        ]),
      ),
    ),
    '',
    'For comparison, in the same run and on the same data:',
    '',
    table(
      ['backend', 'jobs made in', 'first listing (index built) ms', 'old listing: every job read and sorted, ms per call', 'BullMQ getters, one page of one state + counts, in process, ms'],
      rows.map((r) => [r.backend, `${fmt(r.fillS, 0)} s`, fmt(r.firstMs, 0), fmt(r.everyJobMs, 0), fmt(r.dashboardMs, 1)]),
    ),
    '',
    `Target: ${verdict(met)}.`,
  ].join('\n');
  return { name: 'records', title: 'Import records', markdown, targetsMet: met };
}
