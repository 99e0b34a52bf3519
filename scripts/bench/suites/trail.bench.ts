import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { startPrivateRedis } from '../../lib/private-redis';
import { prng } from '../../lib/prng';
import { migratedCatalogDatabase, startCatalog } from '../lib/catalog-process';
import { dropTrailRowsOnOffConnections, withClient } from '../lib/bench-database';
import type { BenchContext } from '../lib/context';
import { timePost } from '../lib/http-load';
import { CATALOG_DIST, freePort, requireBuilt, ROOT } from '../lib/processes';
import { provisionerEnv, startProvisionerApi, startWorker } from '../lib/provisioner-process';
import { drsKeys, drsProject, grantedPassports, importAndRegister } from '../lib/drs-setup';
import { fmt, median, percentile, SuiteReport, table, verdict } from '../lib/report';
import {
  ciVerdict,
  compareP99,
  type Comparison,
  RESAMPLES,
  noiseFloor,
  type Sample,
  shuffled,
} from '../lib/compare';
import { smallFile, writeDataset } from '../data/drs-data';
import { poll } from '../../../test/support/wait';
import { TrailEmitter } from '../../../apps/provisioner/src/trail/trail-emitter';
import { TRAIL_QUEUE, TrailJobName } from '../../../apps/provisioner/src/trail/trail.queue';
import type { ProvisionerSettings } from '../../../apps/provisioner/src/config/provisioner.settings';

/** What appending to the trail may add to a decision's or a grant's p99. */
const OVERHEAD_TARGET = 0.05;
/** Events a second the outbox must deliver, sustained. */
const RATE_TARGET = 1000;
/** "Seconds, not minutes": verifying a million entries. */
const VERIFY_TARGET_S = 30;
const PROJECT = 'BENCH-TRAIL';
/** The API's histogram of its waits for an append (TrailEmitter). */
const APPEND_HISTOGRAM = 'provisioner_trail_append_seconds';
const READER = 'bench-trail-reader';

/** Seeds of the call order and of the resamples: fixed, so runs differ by the machine only. */
const ORDER_SEED = 595;
const BOOTSTRAP_SEED = 5905;
/** Calls of one bootstrap block: about 100 a side, a fraction of a second of DRS calls, 2 s of grants. */
const BLOCK_CALLS = 200;

type Side = 'on' | 'off';

interface Sizes {
  /** DRS phases, alternating live and paused, and the calls to each API in one. */
  drsBlocks: number;
  drsPerSide: number;
  /** REMS parts, and the calls to each catalog in one. */
  remsBlocks: number;
  remsPerSide: number;
}

/** Each side's calls, tagged with their block for the bootstrap. */
type Paired = Record<Side, Sample[]>;

const emptyPaired = (): Paired => ({ on: [], off: [] });

/**
 * The DRS calls by phase: `live`, the trail's queue delivering as deployed; `paused`, the queue
 * paused, so each decision's event is stored before the answer as when live but nothing is
 * delivered meanwhile (the `on` API's calls there are the "written" side).
 */
interface DrsSamples {
  live: Paired;
  paused: Paired;
}

/**
 * `perSide` calls to each side in a random order drawn from `random`, appended to `into`; every
 * BLOCK_CALLS consecutive calls are one bootstrap block, numbered from `firstBlock`. Answers the
 * next free block number.
 */
async function mixedCalls(
  perSide: number,
  call: (side: Side) => Promise<number>,
  random: () => number,
  into: Paired,
  firstBlock: number,
): Promise<number> {
  const order = shuffled<Side>(
    [...Array<Side>(perSide).fill('on'), ...Array<Side>(perSide).fill('off')],
    random,
  );
  for (let i = 0; i < order.length; i++) {
    const side = order[i];
    into[side].push({ ms: await call(side), block: firstBlock + Math.floor(i / BLOCK_CALLS) });
  }
  return firstBlock + Math.ceil(order.length / BLOCK_CALLS);
}

/**
 * DRS decisions on both APIs at once: `blocks` phases alternating live and paused, each of
 * `perSide` calls to each API mixed call by call (so both sides see the same moments of the
 * machine, the delivery of earlier events included), one untimed call to each API after the
 * phase changes.
 */
async function drsCalls(
  blocks: number,
  perSide: number,
  setPhase: (phase: keyof DrsSamples) => Promise<void>,
  call: (side: Side) => Promise<number>,
  loads: number[],
): Promise<DrsSamples> {
  const out: DrsSamples = { live: emptyPaired(), paused: emptyPaired() };
  const random = prng(ORDER_SEED);
  let block = 0;
  for (let b = 0; b < blocks; b++) {
    const phase = b % 2 === 0 ? 'live' : 'paused';
    loads.push(loadavg()[0]);
    await setPhase(phase);
    await call('on');
    await call('off');
    block = await mixedCalls(perSide, call, random, out[phase], block);
  }
  return out;
}

/**
 * REMS grants to both catalogs at once, mixed call by call, in `blocks` parts of `perSide`
 * calls a side (the load average is read between them).
 */
async function remsCalls(
  blocks: number,
  perSide: number,
  call: (side: Side) => Promise<number>,
  loads: number[],
): Promise<Paired> {
  const out = emptyPaired();
  const random = prng(ORDER_SEED + 1);
  let block = 0;
  for (let b = 0; b < blocks; b++) {
    loads.push(loadavg()[0]);
    block = await mixedCalls(perSide, call, random, out, block);
  }
  return out;
}

/** Cumulative counts by upper bound (`le`) of a Prometheus histogram in a /metrics text. */
type Buckets = Map<number, number>;

async function histogramOf(url: string, name: string): Promise<Buckets> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const buckets: Buckets = new Map();
  // Its labels in any order (the registry's default `app` beside `le`).
  const line = new RegExp(`^${name}_bucket\\{[^}]*\\ble="([^"]+)"[^}]*\\} ([0-9.e+]+)$`);
  for (const row of text.split('\n')) {
    const match = line.exec(row);
    if (match !== null)
      buckets.set(match[1] === '+Inf' ? Infinity : Number(match[1]), Number(match[2]));
  }
  if (buckets.size === 0) throw new Error(`${url}/metrics has no ${name}`);
  return buckets;
}

/** `later` less `earlier`, bucket by bucket (added to `into`). */
function addDelta(into: Buckets, later: Buckets, earlier: Buckets): void {
  for (const [le, n] of later) into.set(le, (into.get(le) ?? 0) + n - (earlier.get(le) ?? 0));
}

/** A quantile of a histogram, linear within its bucket (as PromQL's histogram_quantile), in ms. */
function bucketQuantile(buckets: Buckets, q: number): number {
  const bounds = [...buckets.keys()].sort((a, b) => a - b);
  const total = buckets.get(Infinity) ?? 0;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const le of bounds) {
    const n = buckets.get(le) ?? 0;
    if (n >= rank) {
      if (le === Infinity) return lower * 1000;
      return (lower + (le - lower) * ((rank - below) / Math.max(1, n - below))) * 1000;
    }
    lower = le;
    below = n;
  }
  return NaN;
}

const pct = (ratio: number) => `${ratio >= 0 ? '+' : ''}${fmt(ratio * 100, 1)} %`;
const interval = (c: Comparison) => `${pct(c.low)} … ${pct(c.high)}`;

/**
 * The access trail's cost (issue 59, item 5): the p99 of a DRS access decision and of a REMS
 * grant with the trail on and off, mixed call by call in one run; the outbox's delivery at
 * 1,000 events a second with the lag of each event; `trail verify` over a million entries.
 */
export async function trailBench(ctx: BenchContext): Promise<SuiteReport> {
  const sizes: Sizes = {
    drsBlocks: ctx.quick ? 2 : 8,
    drsPerSide: ctx.quick ? 400 : 2500,
    remsBlocks: ctx.quick ? 1 : 8,
    remsPerSide: ctx.quick ? 200 : 2500,
  };
  const rateSeconds = ctx.quick ? 5 : 30;
  const chainEntries = ctx.quick ? 100_000 : 1_000_000;
  const base = join(ctx.tempDir, 'trail');
  mkdirSync(base, { recursive: true });
  const { registrationKey, brokerKey, catalogPort, catalogUrl, catalogEnv } = await drsKeys(base);
  const catalogDb = await migratedCatalogDatabase();
  const db = catalogDb.database.url;
  const redis = await startPrivateRedis({ dir: join(base, 'redis') });
  const loads: number[] = [];
  try {
    // "Off": a second catalog whose connections carry `bench.trail=off` (nothing appended).
    await withClient(db, dropTrailRowsOnOffConnections);
    const catalogSettings = {
      ...catalogDb.env,
      ...catalogEnv,
      ACCESSREQ_INTEGRATION_ENABLED: 'true',
      ACCESSREQ_ALLOWED_IP_ADDRESSES: '127.0.0.1',
    };
    const catalog = await startCatalog(catalogSettings, [], catalogPort);
    const offCatalog = await startCatalog(
      {
        ...catalogSettings,
        DATABASE_URL: `${db}${db.includes('?') ? '&' : '?'}options=-c%20bench.trail%3Doff`,
      },
      [],
      await freePort(),
    );
    let drs: DrsSamples;
    let floor: { appendWaits: Buckets; roundTrip: number[]; after: number[]; jobWrite: number[] };
    let grants: Paired;
    let delivery: DeliveryResult;
    try {
      const dropzone = join(base, 'dropzone');
      writeDataset(dropzone, 'TRAIL-DS', { 'a.txt': smallFile('trail bench\n') });
      await drsProject(catalog.url, dropzone, {
        acronym: PROJECT,
        name: 'Trail bench',
        datasets: ['TRAIL-DS'],
      });
      const onPort = await freePort();
      const offPort = await freePort();
      const env = provisionerEnv({
        redisUrl: redis.url,
        dropzone,
        storage: join(base, 'storage'),
        extra: {
          CATALOG_URL: catalog.url,
          CATALOG_API_KEY: registrationKey,
          DRS_PUBLIC_URL: `http://127.0.0.1:${onPort}`,
          DRS_VISA_ISSUER: catalogUrl,
          DRS_CATALOG_BROKER_KEY: brokerKey,
          DRS_URL_SIGNING_KEY: randomBytes(32).toString('base64url'),
        },
      });
      const worker = await startWorker(env);
      // Trail on: the API reports each decision to the outbox. Off: the same API without the
      // registration key (CATALOG_API_KEY), which turns the outbox off and nothing else.
      const onApi = await startProvisionerApi(env, onPort);
      const offApi = await startProvisionerApi(
        { ...env, CATALOG_API_KEY: undefined, DRS_PUBLIC_URL: `http://127.0.0.1:${offPort}` },
        offPort,
      );
      try {
        const accession = await importAndRegister(onApi.url, 'TRAIL-DS');
        const passports = await grantedPassports(
          catalog.url,
          db,
          READER,
          [accession],
          'Trail bench',
        );
        const object = `${PROJECT}~SUB-DRS~TRAIL-DS`;
        const apis = { on: onApi.url, off: offApi.url };
        const trailQueue = new Queue(TRAIL_QUEUE, {
          connection: { url: redis.url },
          prefix: 'bench',
        });
        let paused = false;
        // The on API's own wait for each append (emit to stored), over the paused phases.
        const appendWaits: Buckets = new Map();
        let pausedFrom: Buckets | undefined;
        const setPhase = async (phase: keyof DrsSamples) => {
          if (phase === 'paused') {
            await trailQueue.pause();
            paused = true;
            pausedFrom = await histogramOf(onApi.url, APPEND_HISTOGRAM);
          } else if (paused) {
            addDelta(appendWaits, await histogramOf(onApi.url, APPEND_HISTOGRAM), pausedFrom!);
            // What the paused phase queued is delivered before the next phase's calls, not
            // during them.
            await trailQueue.resume();
            paused = false;
            await poll(
              async () => ((await trailQueue.getWaitingCount()) === 0 ? true : undefined),
              "the paused phase's events delivered",
              60_000,
              20,
            );
          }
        };
        ctx.log('DRS access decisions, trail on and off call by call, delivery live and paused');
        let roundTrip: number[];
        try {
          roundTrip = await redisRoundTrip(trailQueue);
          drs = await drsCalls(
            sizes.drsBlocks,
            sizes.drsPerSide,
            setPhase,
            async (side) => {
              const r = await timePost(
                `${apis[side]}/ga4gh/drs/v1/objects/${object}/access/https`,
                JSON.stringify({ passports }),
              );
              if (r.status !== 200) throw new Error(`DRS access (${side}): ${r.status} ${r.body}`);
              return r.ms;
            },
            loads,
          );
          await setPhase('live');
        } finally {
          // Also on a failure: an open queue would retry the stopped Redis and hold the bench.
          await trailQueue.close();
        }
        floor = {
          appendWaits,
          roundTrip,
          after: await redisRoundTrip(trailQueue, redis.url),
          jobWrite: await jobWrites(redis.url),
        };
        ctx.log('REMS grants, trail on and off');
        const resource = accession;
        const catalogs = { on: catalog.url, off: offCatalog.url };
        let application = 70_000;
        const grant = async (side: Side) => {
          const n = application++;
          const r = await timePost(
            `${catalogs[side]}/api/accessreq`,
            JSON.stringify([
              {
                application: n,
                resource,
                user: `bench-trail-grantee-${n}`,
                mail: `grantee-${n}@uni.example`,
                end: null,
              },
            ]),
          );
          if (r.status !== 200) throw new Error(`REMS grant (${side}): ${r.status} ${r.body}`);
          return r.ms;
        };
        // One untimed grant to each catalog, which also checks the off one appends nothing
        // (entries other than DRS events: those of the DRS calls may still be arriving).
        const start = await withClient(db, async (c) =>
          Number(
            (await c.query<{ seq: string }>('SELECT seq::text FROM audit_log_head')).rows[0].seq,
          ),
        );
        const appended = () =>
          withClient(db, async (c) =>
            Number(
              (
                await c.query<{ n: string }>(
                  `SELECT count(*)::text AS n FROM audit_log WHERE id > $1 AND object_type <> 'drs_object'`,
                  [start],
                )
              ).rows[0].n,
            ),
          );
        await grant('off');
        if ((await appended()) !== 0) throw new Error('the off catalog appended to the trail');
        await grant('on');
        if ((await appended()) === 0) throw new Error('the on catalog appended nothing');
        grants = await remsCalls(sizes.remsBlocks, sizes.remsPerSide, grant, loads);
        ctx.log(`outbox delivery at ${RATE_TARGET} events/s for ${rateSeconds} s`);
        delivery = await deliver(redis.url, catalog.url, registrationKey, db, rateSeconds, loads);
      } finally {
        await offApi.stop();
        await onApi.stop();
        await worker.stop();
      }
    } finally {
      await offCatalog.stop();
      await catalog.stop();
    }
    ctx.log(`a chain of ${chainEntries} entries`);
    const verify = await verifyChain(catalogDb.env, db, chainEntries, loads);
    return report({ drs, floor, grants, delivery, verify, loads, sizes, quick: ctx.quick });
  } finally {
    await redis.stop();
    await catalogDb.database.drop();
  }
}

/**
 * 1,000 `PING`s, one at a time, on the queue's own connection (or a new one on `url`): the
 * round trip a stored write cannot go below.
 */
async function redisRoundTrip(queue: Queue, url?: string): Promise<number[]> {
  const own =
    url === undefined ? queue : new Queue(TRAIL_QUEUE, { connection: { url }, prefix: 'bench' });
  try {
    const client = await (
      own.getBackend() as unknown as { client: Promise<{ ping(): Promise<string> }> }
    ).client;
    const ms: number[] = [];
    for (let i = 0; i < 1000; i++) {
      const started = performance.now();
      await client.ping();
      ms.push(performance.now() - started);
    }
    return ms;
  } finally {
    if (own !== queue) await own.close();
  }
}

/**
 * 2,000 jobs written one at a time as the emitter writes a decision's event (`Queue.add`, its
 * options), to a queue of their own that no worker reads: what the answer waits for when the
 * trail is on.
 */
async function jobWrites(url: string): Promise<number[]> {
  const queue = new Queue(`${TRAIL_QUEUE}-floor`, { connection: { url }, prefix: 'bench' });
  try {
    const ms: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const id = randomUUID();
      const started = performance.now();
      await queue.add(
        TrailJobName.Report,
        {
          id,
          type: 'drs_object.allow',
          occurred_at: new Date().toISOString(),
          object_id: `${PROJECT}~SUB-DRS~TRAIL-DS`,
          subject: READER,
        },
        { jobId: id, removeOnComplete: { age: 7 * 86_400, count: 100_000 }, removeOnFail: false },
      );
      ms.push(performance.now() - started);
    }
    return ms;
  } finally {
    await queue.obliterate({ force: true });
    await queue.close();
  }
}

interface DeliveryResult {
  events: number;
  /** Events emitted a second, as reached by the emitter. */
  emitRate: number;
  /** Events chained a second, from the first emitted to the last chained. */
  deliveredRate: number;
  /** Per event: chained at the catalog − emitted, ms. */
  lagP50: number;
  lagP99: number;
  lagMax: number;
  /** From the last emit to the last event chained, ms. */
  drainMs: number;
}

/**
 * 1,000 events a second through the production emitter (TrailEmitter on the worker's queue, one
 * emit per event, as a DRS decision makes it) for `seconds`; the worker delivers them. Each
 * event's lag is the catalog's chaining time (`at`) less its `occurred_at`.
 */
async function deliver(
  redisUrl: string,
  catalogUrl: string,
  apiKey: string,
  db: string,
  seconds: number,
  loads: number[],
): Promise<DeliveryResult> {
  const queue = new Queue(TRAIL_QUEUE, { connection: { url: redisUrl }, prefix: 'bench' });
  const emitter = new TrailEmitter(queue, {
    catalogRegistration: { url: catalogUrl, apiKey },
  } as ProvisionerSettings);
  const total = RATE_TARGET * seconds;
  const before = await withClient(db, async (c) =>
    Number((await c.query<{ seq: string }>('SELECT seq::text FROM audit_log_head')).rows[0].seq),
  );
  try {
    loads.push(loadavg()[0]);
    const started = Date.now();
    let sent = 0;
    // Paced in 10 ms steps: each step emits what the clock says is due, one emit per event (the
    // emitter writes a step's events together, as it does requests decided at the same moment).
    while (sent < total) {
      const due = Math.min(total, Math.floor(((Date.now() - started) / 1000) * RATE_TARGET) + 1);
      const pending: Promise<void>[] = [];
      for (; sent < due; sent++) {
        pending.push(
          emitter.emit({
            type: 'drs_object.serve',
            object_id: `${PROJECT}~SUB-DRS~TRAIL-DS~${sent}`,
            subject: READER,
            range_start: 0,
            bytes: 1,
          }),
        );
      }
      await Promise.all(pending);
      await new Promise((r) => setTimeout(r, 10));
    }
    const emitEnd = Date.now();
    const emitRate = total / ((emitEnd - started) / 1000);
    await poll(
      async () =>
        (await withClient(db, (c) =>
          c.query<{ n: string }>(
            `SELECT count(*)::text AS n FROM audit_log WHERE id > $1 AND object_type = 'drs_object' AND action = 'serve'`,
            [before],
          ),
        ).then((r) => Number(r.rows[0].n) >= total))
          ? true
          : undefined,
      'every event delivered',
      600_000,
      200,
    );
    const lags = await withClient(
      db,
      async (c) =>
        (
          await c.query<{ lag: number; at: Date; occurred: Date }>(
            `SELECT extract(epoch FROM at - (change->>'occurred_at')::timestamptz) * 1000 AS lag,
                  at, (change->>'occurred_at')::timestamptz AS occurred
           FROM audit_log WHERE id > $1 AND object_type = 'drs_object' AND action = 'serve'`,
            [before],
          )
        ).rows,
    );
    const first = Math.min(...lags.map((l) => l.occurred.getTime()));
    const last = Math.max(...lags.map((l) => l.at.getTime()));
    const values = lags.map((l) => Number(l.lag));
    loads.push(loadavg()[0]);
    return {
      events: total,
      emitRate,
      deliveredRate: total / ((last - first) / 1000),
      lagP50: percentile(values, 50),
      lagP99: percentile(values, 99),
      lagMax: Math.max(...values),
      drainMs: last - emitEnd,
    };
  } finally {
    await queue.close();
  }
}

interface VerifyResult {
  entries: number;
  appendS: number;
  verifyS: number;
  /** `trail head` by the same built CLI: the tool's start and connection, no checking. */
  floorS: number;
  ok: boolean;
}

/** The built CLI once (`node dist/…/catalog.cli.js <args>`): seconds and parsed JSON. */
function cli(env: NodeJS.ProcessEnv, args: string[]): { s: number; out: Record<string, unknown> } {
  const started = performance.now();
  const run = spawnSync(
    process.execPath,
    [requireBuilt(join(CATALOG_DIST, 'cli/catalog.cli.js')), ...args],
    {
      cwd: ROOT,
      env,
      encoding: 'utf8',
    },
  );
  const s = (performance.now() - started) / 1000;
  if (run.status !== 0)
    throw new Error(`catalog ${args.join(' ')}: exit ${run.status} ${run.stderr}`);
  return { s, out: JSON.parse(run.stdout) as Record<string, unknown> };
}

/**
 * Fills the trail to `entries` (one INSERT through the chaining trigger), then times
 * `trail verify` against `trail head` (the same tool started and connected, no checking).
 */
async function verifyChain(
  env: NodeJS.ProcessEnv,
  db: string,
  entries: number,
  loads: number[],
): Promise<VerifyResult> {
  const appendS = await withClient(db, async (c) => {
    const have = Number(
      (await c.query<{ seq: string }>('SELECT seq::text FROM audit_log_head')).rows[0].seq,
    );
    const started = performance.now();
    await c.query(
      `INSERT INTO audit_log (actor_kind, actor_name, action, object_type, object_id, change)
       SELECT 'registrar', 'bench', 'serve', 'drs_object', 'BENCH~' || g,
              jsonb_build_object('subject', 'bench-subject-' || (g % 1000), 'bytes', g)
       FROM generate_series(1, $1::int) g`,
      [Math.max(0, entries - have)],
    );
    return (performance.now() - started) / 1000;
  });
  loads.push(loadavg()[0]);
  const floor = cli(env, ['trail', 'head']);
  const verify = cli(env, ['trail', 'verify']);
  return {
    entries: Number(verify.out.entries),
    appendS,
    verifyS: verify.s,
    floorS: floor.s,
    ok: verify.out.ok === true,
  };
}

function report(r: {
  drs: DrsSamples;
  floor: { appendWaits: Buckets; roundTrip: number[]; after: number[]; jobWrite: number[] };
  grants: Paired;
  delivery: DeliveryResult;
  verify: VerifyResult;
  loads: number[];
  sizes: Sizes;
  quick: boolean;
}): SuiteReport {
  const { sizes } = r;
  // The off side's calls alternately in two halves, as the sides' calls were mixed.
  const byCall = (_s: Sample, i: number) => (i % 2) as 0 | 1;
  const rows = [
    {
      label: 'DRS access decision (`POST …/objects/{id}/access/https`), delivery live',
      cost: compareP99(r.drs.live.on, r.drs.live.off, BOOTSTRAP_SEED),
      floor: noiseFloor(r.drs.live.off, byCall, BOOTSTRAP_SEED),
    },
    {
      label: 'DRS access decision, delivery paused (the append alone)',
      cost: compareP99(r.drs.paused.on, r.drs.paused.off, BOOTSTRAP_SEED),
      floor: noiseFloor(r.drs.paused.off, byCall, BOOTSTRAP_SEED),
    },
    {
      label: 'REMS grant (`POST /api/accessreq`, one new entitlement)',
      cost: compareP99(r.grants.on, r.grants.off, BOOTSTRAP_SEED),
      floor: noiseFloor(r.grants.off, byCall, BOOTSTRAP_SEED),
    },
  ].map((row) => ({ ...row, verdict: ciVerdict(row.cost, OVERHEAD_TARGET) }));
  const verdictCell = (v: 'met' | 'missed' | 'undecided') =>
    v === 'undecided'
      ? `not decided (the interval spans ${OVERHEAD_TARGET * 100} %)`
      : verdict(v === 'met');
  const paused = rows[1].cost;
  const beside = compareP99(r.drs.live.off, r.drs.paused.off, BOOTSTRAP_SEED);
  const trips = [...r.floor.roundTrip, ...r.floor.after];
  const d = r.delivery;
  const rateOk = d.deliveredRate >= RATE_TARGET * 0.95 && d.emitRate >= RATE_TARGET * 0.95;
  const verifyS = r.verify.verifyS - r.verify.floorS;
  const verifyOk = r.verify.ok && r.verify.entries >= 1_000_000 && verifyS < VERIFY_TARGET_S;
  const load = `load average ${fmt(Math.min(...r.loads), 2)}–${fmt(Math.max(...r.loads), 2)} (1 min) during the run, median ${fmt(median(r.loads), 2)}`;
  const drsPerPhase = (sizes.drsBlocks / 2) * sizes.drsPerSide;
  const markdown = [
    '## Access trail',
    '',
    `The cost of issue 59's access trail, with the built apps (LOG_LEVEL=warn), one catalog (two for`,
    'the REMS grants), one worker, a private Redis. **Trail cost**: the p99 of a call with the trail on against the same',
    'call with it off, sequential calls, client-side time, with a 95 % confidence interval (block',
    `bootstrap, ${RESAMPLES.toLocaleString('en')} resamples, fixed seed; a block is ${BLOCK_CALLS} consecutive calls, so the`,
    "machine's noise, correlated in time, is resampled whole). Noise floor: the off side split in two",
    'interleaved halves and compared the same way (a true cost of zero). Target: the trail adds at',
    `most ${OVERHEAD_TARGET * 100} % to the p99; **met** when the whole interval is within it, **missed** when the whole`,
    'interval is beyond it. Method: [decision record](decisions/trail-cost-measured-call-by-call.md).',
    '',
    '- DRS: two provisioner APIs over one queue and storage, the same settings but the second',
    "  without `CATALOG_API_KEY` (its outbox off); each decision checks the reader's passport of",
    '  catalog visas for a dataset granted to them. The two APIs are called call by call in a',
    `  seeded random order, ${sizes.drsBlocks} phases of ${sizes.drsPerSide} calls to each API, alternating: the trail's queue`,
    '  delivering (live) and paused (each event stored before the answer as when live, nothing',
    '  delivered meanwhile, what it queued delivered before the next phase): ' +
      `${drsPerPhase.toLocaleString('en')} calls a side in each.`,
    '- REMS: one new entitlement per delivery, to two catalogs over one database, the second',
    '  connecting with `options=-c bench.trail=off`; a `BEFORE INSERT` trigger on `audit_log`, fired',
    "  before the chain's, drops every row written on such a connection (nothing appended, nothing",
    '  chained; the on side pays for the same check). The two catalogs are called call by call in a',
    `  seeded random order, ${sizes.remsBlocks} parts of ${sizes.remsPerSide} calls to each: ${(sizes.remsBlocks * sizes.remsPerSide).toLocaleString('en')} calls a side.`,
    '',
    table(
      [
        'call',
        'trail on p50 / p99 ms',
        'trail off p50 / p99 ms',
        'p99 cost (95 % interval)',
        'noise floor (95 % interval)',
        'target',
      ],
      rows.map((row) => [
        row.label,
        `${fmt(row.cost.p50, 2)} / **${fmt(row.cost.p99, 2)}**`,
        `${fmt(row.cost.baseP50, 2)} / **${fmt(row.cost.baseP99, 2)}**`,
        `**${pct(row.cost.cost)}** (${interval(row.cost)})`,
        `${pct(row.floor.cost)} (${interval(row.floor)})`,
        verdictCell(row.verdict),
      ]),
    ),
    '',
    "**The delivery beside the calls**: with the calls mixed, the delivery of the on side's",
    'events (worker, catalog, PostgreSQL, on the same 2 CPUs) runs under the calls of both sides,',
    'so the live row compares two sides that both pay for it. What it costs every call on this',
    `machine: the off API's p99 with the delivery live ${fmt(beside.p99, 2)} ms against paused`,
    `${fmt(beside.baseP99, 2)} ms, **${pct(beside.cost)}** (${interval(beside)}). Deployed, the delivery runs elsewhere.`,
    '',
    "**What the answer waits for**: the paused row is the append alone, the event's job written to",
    'Redis before the decision is answered (so an answered decision is never lost,',
    '[group commit](decisions/provisioner-trail-group-commit.md)); it adds',
    `${fmt(paused.p50 - paused.baseP50, 2)} ms to the p50 and ${fmt(paused.p99 - paused.baseP99, 2)} ms to the p99 of a decision whose p99 is ${fmt(paused.baseP99, 2)} ms.`,
    `Inside the on API, the wait itself (emit to stored: its \`${APPEND_HISTOGRAM}\` over the paused phases,`,
    `${(r.floor.appendWaits.get(Infinity) ?? 0).toLocaleString('en')} appends, read within its buckets) p50 / p99 ${fmt(bucketQuantile(r.floor.appendWaits, 0.5), 2)} / **${fmt(bucketQuantile(r.floor.appendWaits, 0.99), 2)}** ms.`,
    'The floors of that write, timed from the bench on the same machine: a Redis round trip',
    `(\`PING\`, ${trips.length} before and after the DRS calls) p50 / p99 ${fmt(percentile(trips, 50), 3)} / **${fmt(percentile(trips, 99), 3)}** ms;`,
    `the emitter's job write (\`Queue.add\` with its options, ${r.floor.jobWrite.length} one at a time, to a queue no worker`,
    `reads) p50 / p99 ${fmt(percentile(r.floor.jobWrite, 50), 3)} / **${fmt(percentile(r.floor.jobWrite, 99), 3)}** ms. ${OVERHEAD_TARGET * 100} % of the decision's p99 is`,
    `${fmt(OVERHEAD_TARGET * paused.baseP99, 2)} ms; one Redis round trip's p99 is **${fmt((100 * percentile(trips, 99)) / paused.baseP99, 1)} %** of it, the job write's`,
    `**${fmt((100 * percentile(r.floor.jobWrite, 99)) / paused.baseP99, 1)} %** (both timed back to back, not inside a decision).`,
    '',
    `**Delivery**: ${d.events.toLocaleString('en')} events emitted at ${RATE_TARGET}/s through \`TrailEmitter\``,
    '(one emit per event, as a DRS decision makes it; those of one step written together), delivered by the worker to `POST /api/trail/events`',
    'in batches of up to 500, a new head waiting `TRAIL_BATCH_WAIT_MS` (200 ms) from its queueing for the events behind it.',
    "Lag: the catalog's chaining time less the event's `occurred_at`, per event (the wait included).",
    `Target: delivered at ≥ ${RATE_TARGET}/s (within 5 %).`,
    '',
    table(
      [
        'emitted / s',
        'delivered / s',
        'lag p50 / p99 / max ms',
        'drained after the last emit ms',
        'target',
      ],
      [
        [
          fmt(d.emitRate, 0),
          `**${fmt(d.deliveredRate, 0)}**`,
          `${fmt(d.lagP50, 0)} / ${fmt(d.lagP99, 0)} / ${fmt(d.lagMax, 0)}`,
          fmt(d.drainMs, 0),
          verdict(rateOk),
        ],
      ],
    ),
    '',
    `**Verify**: the trail filled to ${r.verify.entries.toLocaleString('en')} entries by one \`INSERT … SELECT\``,
    `through the chaining trigger (${fmt(r.verify.appendS, 1)} s), then \`node dist/…/catalog.cli.js trail verify\``,
    `(built CLI) timed whole, less \`trail head\` by the same CLI (its start and connection: ${fmt(r.verify.floorS, 1)} s).`,
    `Target: a million entries in under ${VERIFY_TARGET_S} s.`,
    '',
    table(
      ['entries', 'verify s (whole)', 'verify s (less the start)', 'chain holds', 'target'],
      [
        [
          r.verify.entries,
          fmt(r.verify.verifyS, 1),
          `**${fmt(verifyS, 1)}**`,
          r.verify.ok ? 'yes' : '**no**',
          r.verify.entries >= 1_000_000 ? verdict(verifyOk) : "smaller than the target's chain",
        ],
      ],
    ),
    '',
    `Machine ${load}.${r.quick ? ' `--quick`: a smoke run, not a figure.' : ''}`,
  ].join('\n');
  return {
    name: 'trail',
    title: 'Access trail',
    markdown,
    targetsMet: rows.every((row) => row.verdict === 'met') && rateOk && verifyOk,
  };
}
