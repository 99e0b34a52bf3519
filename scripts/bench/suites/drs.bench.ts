import { Queue } from 'bullmq';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { imageEnv } from '../../lib/deployed-node-args';
import { startPrivateRedis } from '../../lib/private-redis';
import { migratedCatalogDatabase, startCatalog } from '../lib/catalog-process';
import type { BenchContext } from '../lib/context';
import { timeGet, timePost } from '../lib/http-load';
import { cpuMs, freePort, processMemory, stopChild } from '../lib/processes';
import { provisionerEnv, startProvisionerApi, startWorker } from '../lib/provisioner-process';
import { fmt, median, percentile, SuiteReport, table, verdict } from '../lib/report';
import { startOffloadNginx } from '../../../test/support/nginx';
import { bigFile, smallFile, writeDataset } from '../data/drs-data';
import { drsKeys, drsProject, grantedPassports, importAndRegister } from '../lib/drs-setup';
import { poll } from '../../../test/support/wait';
import { TRAIL_QUEUE } from '../../../apps/provisioner/src/trail/trail.queue';

/** The API alone: access URL reads at 0.9× nginx serving the same file, or better. */
const THROUGHPUT_TARGET = 0.9;
/** The API offloaded to nginx: 0.95× nginx alone with the same configuration, or better. */
const OFFLOAD_TARGET = 0.95;
/** As startProvisionerApi starts the API (and k8s/base/provisioner/api-deployment.yaml). */
const API_NODE_ARGS = ['--max-semi-space-size=4', '--max-old-space-size=192'];
/** Access decisions for 1,000 objects in one bulk request, p99. */
const BULK_TARGET_MS = 200;
const PROJECT = 'BENCH-DRS';
const READER = 'bench-drs-reader';
const MiB = 1024 * 1024;

/**
 * nginx (Debian) serving `root` with sendfile and nothing else configured: the ceiling this bench
 * measured against until issue 61. Kept as a column of its own so the run shows what the
 * configuration (against the template's) changes, and what it does not.
 */
async function startMinimalNginx(dir: string, root: string) {
  const port = await freePort();
  mkdirSync(join(dir, 'logs'), { recursive: true });
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `daemon off; worker_processes 1; user root; pid ${dir}/nginx.pid; error_log ${dir}/logs/error.log;
events { worker_connections 64; }
http { sendfile on; tcp_nopush on; access_log off; client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fcgi; uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server { listen 127.0.0.1:${port}; root ${root}; } }\n`,
  );
  const child = spawn('/usr/sbin/nginx', ['-c', conf, '-p', dir], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await poll(
    async () => ((await fetch(url).catch(() => null)) === null ? undefined : true),
    'nginx',
    10_000,
  );
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGQUIT');
      }),
  };
}

/**
 * The floor of Node itself: lib/file-floor-server.mjs serving `root` (`/pipe/…`: a read stream
 * piped into the answer; `/loop/…`: the API's read loop without the API), with the API's V8 flags
 * and the image's allocator settings.
 */
async function startFileFloor(root: string) {
  const child = spawn(
    process.execPath,
    [...API_NODE_ARGS, join(__dirname, '../lib/file-floor-server.mjs'), root],
    // The image's allocator settings, as startProvisionerApi gives the API.
    { env: { ...process.env, ...imageEnv() }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise<number>((done, fail) => {
    const timer = setTimeout(() => fail(new Error('file floor server did not start')), 10_000);
    child.stdout!.once('data', (chunk: Buffer) => {
      clearTimeout(timer);
      done(Number(chunk.toString().trim()));
    });
    child.once('exit', (code) => fail(new Error(`file floor server exited (${code})`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => stopChild(child) };
}

/**
 * Resolves once the trail's queue holds nothing to deliver (every record emitted so far is in
 * the catalog): how long that took (ms).
 */
async function trailDelivered(queue: Queue): Promise<number> {
  const started = performance.now();
  await poll(
    async () => {
      const counts = await queue.getJobCounts('wait', 'active', 'delayed', 'prioritized');
      return Object.values(counts).every((n) => n === 0) ? true : undefined;
    },
    'the trail delivered',
    600_000,
    50,
  );
  return performance.now() - started;
}

/**
 * One read by curl: its download speed (bytes/s), its time to the first byte of the answer and
 * its whole time (ms).
 */
export interface CurlRead {
  speed: number;
  firstByteMs: number;
  totalMs: number;
}

/**
 * One read by curl of `url`, the body discarded, optionally one range and request headers
 * (`Name: value`).
 */
export function curlRead(url: string, range?: string, headers: string[] = []): CurlRead {
  const args = [
    '-s',
    '-o',
    '/dev/null',
    '-w',
    '%{http_code} %{speed_download} %{time_starttransfer} %{time_total}',
  ];
  if (range !== undefined) args.push('-r', range);
  for (const header of headers) args.push('-H', header);
  const out = spawnSync('curl', [...args, url], { encoding: 'utf8' });
  const [code, speed, firstByte, total] = out.stdout.split(' ');
  if (out.status !== 0 || !/^20[06]$/.test(code))
    throw new Error(`curl ${url}: exit ${out.status}, HTTP ${code} ${out.stderr}`);
  return {
    speed: Number(speed),
    firstByteMs: Number(firstByte) * 1000,
    totalMs: Number(total) * 1000,
  };
}

/**
 * curl's download speed (bytes/s) for `url`, the body discarded, optionally one range and request
 * headers (`Name: value`).
 */
export function curlSpeed(url: string, range?: string, headers: string[] = []): number {
  return curlRead(url, range, headers).speed;
}

/**
 * What a round reads the file through: the API alone, the API offloaded to nginx, nginx alone
 * with the offload's configuration (the ceiling), nginx alone with the minimal configuration of
 * the bench before issue 61, and Node's floors (a read stream piped, the bare read loop).
 */
const SIDES = ['drs', 'offload', 'nginx', 'minimal', 'pipe', 'loop'] as const;
type Side = (typeof SIDES)[number];
/**
 * One-byte reads: every side, the API's `/health/live`, and the offload's API asked directly with
 * its trail on (`check`, as deployed) and off (`untrailed`).
 */
type Tiny = Side | 'health' | 'check' | 'untrailed';
/** One round's speeds (bytes/s). */
type Speeds = Record<Side, number>;

/**
 * One round: every side read once, in the order of row `round` of a balanced Latin square (the
 * Williams design for an even count): over a full turn every side comes once in every place and
 * right after every other side once, so what one read leaves behind (a busy process, the trail's
 * delivery) falls on each side alike.
 */
function rotated(round: number, read: (side: Side) => number): Speeds {
  const n = SIDES.length;
  const speeds = {} as Speeds;
  for (let i = 0; i < n; i++) {
    // First row 0, 1, n-1, 2, n-2, …; each further row adds one to every entry.
    const first = i === 0 ? 0 : i % 2 === 1 ? (i + 1) / 2 : n - i / 2;
    const side = SIDES[(first + round) % n];
    speeds[side] = read(side);
  }
  return speeds;
}

/**
 * DRS: the bytes of a 1 GiB file read through its access URL against nginx serving the same file
 * with sendfile, whole and in 64 MiB ranges, interleaved, with curl as the client: the provisioner
 * API sending the file itself (DRS_BYTES_OFFLOAD=off) and a second API process offloading to an
 * nginx from deploy/nginx/drs-offload.conf.template (DRS_BYTES_OFFLOAD=nginx). And the access
 * decisions of one bulk request for 1,000 objects (passport of the catalog's visas, grant check,
 * 1,000 objects resolved).
 */
export async function drsBench(ctx: BenchContext): Promise<SuiteReport> {
  const bigBytes = (ctx.quick ? 64 : 1024) * MiB;
  const manyFiles = ctx.quick ? 100 : 1000;
  // Six: a full turn of the Latin square (see rotated); ranges are short, so two turns.
  const rounds = ctx.quick ? 2 : SIDES.length;
  const rangeRounds = 2 * rounds;
  const bulkRounds = ctx.quick ? 10 : 100;
  const base = join(ctx.tempDir, 'drs');
  mkdirSync(base, { recursive: true });
  const { registrationKey, brokerKey, catalogPort, catalogUrl, catalogEnv } = await drsKeys(base);
  const catalogDb = await migratedCatalogDatabase();
  const redis = await startPrivateRedis({ dir: join(base, 'redis') });
  const catalog = await startCatalog(
    {
      ...catalogDb.env,
      ...catalogEnv,
    },
    [],
    catalogPort,
  );
  const whole: Speeds[] = [];
  const ranged: Speeds[] = [];
  /** Each ranged read's time to its first byte (ms): for the offload, the API's answer. */
  const rangedFirstByte: Speeds[] = [];
  /** Ranged reads, offloaded and nginx alone, with the trail delivering during the reads. */
  const delivering: { offload: number; nginx: number; offloadFirstByte: number }[] = [];
  /**
   * One-byte reads (ms, curl's total): each side's fixed cost of a read, and the API's
   * `/health/live`, the cost of any request through the API's framework (routing, guard,
   * interceptors, logging, metrics) with no DRS work.
   */
  const tiny: Record<Tiny, number>[] = [];
  let bulkDrainMs = 0;
  let deliveryCpuPerRead = 0;
  let heldReads = 0;
  const rangeBytes = Math.min(64 * MiB, bigBytes / 4);
  const loads: number[] = [];
  const bulk: number[] = [];
  let apiMemoryMiB = 0;
  try {
    const dropzone = join(base, 'dropzone');
    ctx.log(`writing a ${bigBytes / MiB} MiB file and ${manyFiles} small ones`);
    writeDataset(dropzone, 'DRS-BIG', { 'big.bin': bigFile(bigBytes) });
    writeDataset(
      dropzone,
      'DRS-MANY',
      Object.fromEntries(
        Array.from({ length: manyFiles }, (_, i) => [`f${i}.txt`, smallFile(`file ${i}\n`)]),
      ),
    );
    await drsProject(catalog.url, dropzone, {
      acronym: PROJECT,
      name: 'DRS bench',
      datasets: ['DRS-BIG', 'DRS-MANY'],
    });
    const apiPort = await freePort();
    const drsUrl = `http://127.0.0.1:${apiPort}`;
    const storage = join(base, 'storage');
    const env = provisionerEnv({
      redisUrl: redis.url,
      dropzone,
      storage,
      extra: {
        CATALOG_URL: catalog.url,
        CATALOG_API_KEY: registrationKey,
        DRS_PUBLIC_URL: drsUrl,
        DRS_VISA_ISSUER: catalogUrl,
        DRS_CATALOG_BROKER_KEY: brokerKey,
        // Production (NODE_ENV) requires it: replicas share the key that signs access URLs.
        DRS_URL_SIGNING_KEY: randomBytes(32).toString('base64url'),
      },
    });
    const api = await startProvisionerApi(env, apiPort);
    const worker = await startWorker(env);
    const workerPid = worker.child.pid!;
    const trailQueue = new Queue(TRAIL_QUEUE, { connection: { url: redis.url }, prefix: 'bench' });
    let workerHeld = false;
    const holdDelivery = (hold: boolean) => {
      process.kill(workerPid, hold ? 'SIGSTOP' : 'SIGCONT');
      workerHeld = hold;
    };
    // The ceiling: the offload's own nginx configuration (template and main file), its storage
    // location opened to clients, so both nginx sides serve with the same directives.
    const nginx = await startOffloadNginx(
      join(base, 'nginx'),
      '127.0.0.1:9',
      storage,
      undefined,
      '/_drs_internal/',
      { openInternal: true },
    );
    const minimal = await startMinimalNginx(join(base, 'minimal-nginx'), storage);
    const floor = await startFileFloor(storage);
    const offloadApiPort = await freePort();
    const offloadPort = await freePort();
    const offloadApi = await startProvisionerApi(
      {
        ...env,
        DRS_PUBLIC_URL: `http://127.0.0.1:${offloadPort}`,
        DRS_BYTES_OFFLOAD: 'nginx',
      },
      offloadApiPort,
    );
    // The offload's API with its trail off (no CATALOG_API_KEY: no outbox), asked directly beside
    // the offload's own API for one-byte reads: what writing the read's record before the answer costs.
    const untrailedApi = await startProvisionerApi({
      ...Object.fromEntries(Object.entries(env).filter(([name]) => name !== 'CATALOG_API_KEY')),
      DRS_PUBLIC_URL: `http://127.0.0.1:${offloadPort}`,
      DRS_BYTES_OFFLOAD: 'nginx',
    });
    const offload = await startOffloadNginx(
      join(base, 'offload-nginx'),
      `127.0.0.1:${offloadApiPort}`,
      storage,
      offloadPort,
    );
    try {
      const accessions: string[] = [];
      for (const id of ['DRS-BIG', 'DRS-MANY'])
        accessions.push(await importAndRegister(api.url, id));
      const passports = await grantedPassports(
        catalog.url,
        catalogDb.database.url,
        READER,
        accessions,
        'DRS bench',
      );
      const drs = `${api.url}/ga4gh/drs/v1`;
      const post = async (path: string, body: unknown) => {
        const r = await timePost(`${drs}${path}`, JSON.stringify(body));
        if (r.status !== 200) throw new Error(`POST ${path}: ${r.status} ${r.body.toString()}`);
        return { ms: r.ms, body: JSON.parse(r.body.toString()) as Record<string, unknown> };
      };
      const manifest = async (id: string) => {
        const { body } = await post(`/objects/${id}/access/https`, { passports });
        const r = await timeGet(body.url as string);
        return JSON.parse(r.body.toString()) as { objects: { id: string; path: string }[] };
      };
      const [big] = (await manifest(`${PROJECT}~SUB-DRS~DRS-BIG`)).objects;
      const many = (await manifest(`${PROJECT}~SUB-DRS~DRS-MANY`)).objects.map((o) => o.id);
      const bigUrl = (await post(`/objects/${big.id}/access/https`, { passports })).body
        .url as string;
      const offloaded = await timePost(
        `${offload.url}/ga4gh/drs/v1/objects/${big.id}/access/https`,
        JSON.stringify({ passports }),
      );
      if (offloaded.status !== 200) throw new Error(`offloaded access URL: ${offloaded.status}`);
      const offloadUrl = (JSON.parse(offloaded.body.toString()) as { url: string }).url;
      // Before the byte reads: curl runs blocking, and a kept-alive connection would go stale.
      for (let round = 0; round < bulkRounds; round++) {
        const r = await post('/objects', { bulk_object_ids: many, passports });
        const resolved = (r.body.summary as { resolved: number }).resolved;
        if (resolved !== many.length) throw new Error(`bulk resolved ${resolved}`);
        bulk.push(r.ms);
      }
      // The bulk decisions' records (one per object) are delivered before any byte is read: until issue 61
      // item 3 their delivery (worker, catalog, PostgreSQL) ran through the byte rounds.
      bulkDrainMs = await trailDelivered(trailQueue);
      const stored = `projects/${PROJECT}/SUB-DRS/data/raw/DRS-BIG/${big.path}`;
      const urls: Record<Side, string> = {
        drs: bigUrl,
        offload: offloadUrl,
        nginx: `${nginx.url}/_drs_internal/${stored}`,
        minimal: `${minimal.url}/${stored}`,
        pipe: `${floor.url}/pipe/${stored}`,
        loop: `${floor.url}/loop/${stored}`,
      };
      // The import wrote the file past the page cache: one untimed read puts it there, and one
      // more through every side leaves each server as warm as the others (opened files, its
      // first allocations), so every timed read is of memory.
      for (const side of SIDES) curlSpeed(urls[side]);
      await trailDelivered(trailQueue);
      // The timed reads' own trail records wait while they run (the worker stopped) and are
      // delivered after: on this machine's two cores a delivery (worker, catalog, PostgreSQL)
      // would share the cores with the read that emitted it, where the deployment runs them
      // elsewhere. The rounds after these measure the offload with the delivery running.
      holdDelivery(true);
      for (let round = 0; round < rangeRounds; round++) {
        loads.push(loadavg()[0]);
        if (round < rounds) whole.push(rotated(round, (side) => curlSpeed(urls[side])));
        const start = (round * 7 * rangeBytes) % (bigBytes - rangeBytes);
        const range = `${start}-${start + rangeBytes - 1}`;
        const firstByte = {} as Speeds;
        ranged.push(
          rotated(round, (side) => {
            const read = curlRead(urls[side], range);
            firstByte[side] = read.firstByteMs;
            return read.speed;
          }),
        );
        rangedFirstByte.push(firstByte);
      }
      heldReads = rounds * 2 + rangeRounds * 2;
      const delivery = () => cpuMs(workerPid) + cpuMs(catalog.child.pid!);
      const beforeDelivery = delivery();
      holdDelivery(false);
      await trailDelivered(trailQueue);
      deliveryCpuPerRead = (delivery() - beforeDelivery) / heldReads;
      // The offload against nginx alone with the trail delivering each offloaded read's record
      // while nginx sends it (as every round ran before issue 61 item 3), the order alternating.
      for (let round = 0; round < rounds; round++) {
        const start = (round * 5 * rangeBytes) % (bigBytes - rangeBytes);
        const range = `${start}-${start + rangeBytes - 1}`;
        const order =
          round % 2 === 0 ? (['offload', 'nginx'] as const) : (['nginx', 'offload'] as const);
        const reads = {} as Record<'offload' | 'nginx', CurlRead>;
        for (const side of order) reads[side] = curlRead(urls[side], range);
        delivering.push({
          offload: reads.offload.speed,
          nginx: reads.nginx.speed,
          offloadFirstByte: reads.offload.firstByteMs,
        });
      }
      await trailDelivered(trailQueue);
      // Each side's fixed cost: one byte, 20 rounds in a rotating order, the delivery held again.
      const offloadPath = new URL(offloadUrl).pathname;
      const tinyUrls: Record<Tiny, string> = {
        ...urls,
        health: `${api.url}/health/live`,
        check: `http://127.0.0.1:${offloadApiPort}${offloadPath}`,
        untrailed: `${untrailedApi.url}${offloadPath}`,
      };
      const tinySides = Object.keys(tinyUrls) as Tiny[];
      holdDelivery(true);
      for (let round = 0; round < 20; round++) {
        const costs = {} as Record<Tiny, number>;
        for (let i = 0; i < tinySides.length; i++) {
          const side = tinySides[(i + round) % tinySides.length];
          costs[side] = curlRead(tinyUrls[side], side === 'health' ? undefined : '0-0').totalMs;
        }
        tiny.push(costs);
      }
      holdDelivery(false);
      await trailDelivered(trailQueue);
      loads.push(loadavg()[0]);
      apiMemoryMiB = processMemory(api.child.pid!, 'VmHWM') / MiB;
    } finally {
      if (workerHeld) holdDelivery(false);
      await trailQueue.close();
      await offload.stop();
      await offloadApi.stop();
      await untrailedApi.stop();
      await floor.stop();
      await minimal.stop();
      await nginx.stop();
      await worker.stop();
      await api.stop();
    }
  } finally {
    await catalog.stop();
    await redis.stop();
    await catalogDb.database.drop();
  }
  const mbs = (bytesPerSecond: number) => fmt(bytesPerSecond / 1e6, 0);
  const med = (rows: Speeds[], who: Side) => median(rows.map((r) => r[who]));
  const ratio = (rows: Speeds[], who: Side, of: Side = 'nginx') => med(rows, who) / med(rows, of);
  const size = (bytes: number) =>
    bytes >= 1024 * MiB ? `${bytes / 1024 / MiB} GiB` : `${bytes / MiB} MiB`;
  const medianOf = (values: number[]) => median(values);
  const tinyMs = (side: Tiny) => medianOf(tiny.map((t) => t[side]));
  const rangeMs = (side: Side) => medianOf(ranged.map((r) => (rangeBytes / r[side]) * 1000));
  const deliveringRatio =
    medianOf(delivering.map((d) => d.offload)) / medianOf(delivering.map((d) => d.nginx));
  // The floors a missed target is reported against, from this run: the API alone cannot send a
  // range faster than the bare loop plus what its framework costs any request over a bare Node
  // server; the offload cannot send one faster than nginx plus the API's check before it.
  const frameworkMs = Math.max(0, tinyMs('health') - tinyMs('loop'));
  const apiRangeFloor = rangeMs('nginx') / (rangeMs('loop') + frameworkMs);
  const checkMs = Math.max(0, tinyMs('offload') - tinyMs('nginx'));
  const offloadRangeFloor = rangeMs('nginx') / (rangeMs('nginx') + checkMs);
  const apiWholeMet = ratio(whole, 'drs') >= THROUGHPUT_TARGET;
  const apiRangesMet = ratio(ranged, 'drs') >= THROUGHPUT_TARGET;
  const apiMet = apiWholeMet && apiRangesMet;
  const offloadMet =
    ratio(whole, 'offload') >= OFFLOAD_TARGET && ratio(ranged, 'offload') >= OFFLOAD_TARGET;
  const p99 = percentile(bulk, 99);
  const met = apiMet && offloadMet && p99 < BULK_TARGET_MS;
  // What stops the API alone when it misses: the bare read loop and the piped stream on the same
  // file, client and V8 flags (the faster of the two is Node's floor in this run).
  const floorOf = (rows: Speeds[]) => Math.max(ratio(rows, 'loop'), ratio(rows, 'pipe'));
  const load = `${fmt(Math.min(...loads), 1)}–${fmt(Math.max(...loads), 1)}`;
  const perRead = (side: Side) =>
    `${fmt(median(ranged.map((r) => (rangeBytes / r[side]) * 1000)), 1)} ms ` +
    `(first byte ${fmt(median(rangedFirstByte.map((r) => r[side])), 1)} ms)`;
  ctx.log(
    `DRS: API alone whole ${fmt(ratio(whole, 'drs'), 2)}× nginx, ranges ${fmt(ratio(ranged, 'drs'), 2)}× ` +
      `(Node's floor ${fmt(floorOf(whole), 2)}×, ${fmt(floorOf(ranged), 2)}×); offloaded whole ` +
      `${fmt(ratio(whole, 'offload'), 2)}×, ranges ${fmt(ratio(ranged, 'offload'), 2)}×; minimal nginx ` +
      `${fmt(ratio(whole, 'minimal'), 2)}×, ${fmt(ratio(ranged, 'minimal'), 2)}×; offloaded ranges with the trail delivering ` +
      `${fmt(deliveringRatio, 2)}×; bulk p99 ${fmt(p99, 0)} ms; load average ${load}`,
  );
  const row = (label: string, rows: Speeds[]) => [
    label,
    mbs(med(rows, 'nginx')),
    ...(['drs', 'offload', 'loop', 'pipe', 'minimal'] as const).map(
      (side) => `${mbs(med(rows, side))} (${fmt(ratio(rows, side), 2)}×)`,
    ),
    fmt(ratio(rows, 'drs', 'loop'), 2),
  ];
  const markdown = [
    '## DRS (GA4GH 1.5)',
    '',
    `A ${size(bigBytes)} stored file read through its DRS access URL, curl as the client (body to /dev/null), from six sides:`,
    "- **nginx**, the ceiling: Debian nginx serving the file with the offload's own configuration",
    '  (deploy/nginx/drs-offload.conf.template and its main file, test/support/nginx.ts) with the',
    '  storage location opened to clients: the directives that send an offloaded read, and no others;',
    '- **API**: the built provisioner API sending the file itself (`DRS_BYTES_OFFLOAD=off`);',
    '- **offloaded**: a second API process checking the access URL and handing the bytes to that',
    '  nginx configuration (`DRS_BYTES_OFFLOAD=nginx`);',
    "- Node's floors, a bare Node server (scripts/bench/lib/file-floor-server.mjs, the API's V8 flags and the image's allocator settings):",
    "  **loop**, the API's read loop without the API (two reused 1 MiB buffers that start on a memory page, one read while the",
    '  other is written), and **pipe**, `fs.createReadStream` (1 MiB reads) piped into the answer;',
    "- **minimal nginx**: nginx with only `sendfile on; tcp_nopush on`, this bench's ceiling before issue 61.",
    '',
    `Every side is read once untimed first (the import wrote the file past the page cache: every timed read is of memory).`,
    `Then ${rounds} rounds of the whole file and ${rangeRounds} of ${size(rangeBytes)} ranges, every side once a round,`,
    'in the order of a balanced Latin square (every side once in every place and once right after every other); medians.',
    "The access trail's delivery (worker, catalog, PostgreSQL) runs on no timed read's cores: the bulk",
    `decisions below are made first and their ${fmt(manyFiles * bulkRounds, 0)} records delivered before the first byte is read (${fmt(bulkDrainMs / 1000, 1)} s;`,
    'until issue 61 item 3 that delivery ran through the byte rounds), and the worker is stopped while the rounds run, their',
    `${heldReads} records delivered after them (worker and catalog: ${fmt(deliveryCpuPerRead, 1)} ms of CPU a read). On this machine's two cores a`,
    'delivery shares the cores with the read that emitted it; deployed, the worker and catalog run elsewhere. With the',
    `delivery running (${rounds} more ranges each, offloaded and nginx alone alternating) the offload reads ${fmt(deliveringRatio, 2)}× nginx`,
    `(first byte ${fmt(median(delivering.map((d) => d.offloadFirstByte)), 1)} ms): the offloaded read's record is written before nginx sends, so its delivery`,
    'runs during the transfer (docs/decisions/drs-bench-ceiling.md).',
    `The minimal column reads ${fmt(ratio(whole, 'minimal'), 2)}× (whole) and ${fmt(ratio(ranged, 'minimal'), 2)}× (ranges) the template's configuration.`,
    `Fixed cost of a read (one byte, curl's total, median of 20 interleaved rounds): nginx ${fmt(tinyMs('nginx'), 2)} ms,`,
    `offloaded ${fmt(tinyMs('offload'), 2)} ms, API ${fmt(tinyMs('drs'), 2)} ms, bare loop ${fmt(tinyMs('loop'), 2)} ms; the API's \`/health/live\` (its framework, no DRS work) ${fmt(tinyMs('health'), 2)} ms;`,
    `the offload's API asked directly (its answer without nginx) ${fmt(tinyMs('check'), 2)} ms, and the same with its trail off ${fmt(tinyMs('untrailed'), 2)} ms`,
    "(the difference: the read's trail record, written to the queue before the answer).",
    `Then one bulk \`POST /objects\` for ${manyFiles} objects with the catalog's visas as the passport,`,
    `${bulkRounds} times (the grant check's answer is reused for \`DRS_GRANT_CHECK_SECONDS\`, as in production).`,
    `Targets: API alone ≥ ${THROUGHPUT_TARGET}× nginx and offloaded ≥ ${OFFLOAD_TARGET}× nginx, whole and ranged; bulk p99 < ${BULK_TARGET_MS} ms.${ctx.quick ? ' **Quick mode: not a real figure.**' : ''}`,
    `Load average (1 min) during the byte rounds: ${load}.`,
    '',
    `A ${size(rangeBytes)} range, medians per read: nginx ${perRead('nginx')}, offloaded ${perRead('offload')}, API ${perRead('drs')}, loop ${perRead('loop')}`,
    "(time to the first byte: for the offloaded read, the API's check of the access URL and the trail's record written to its queue, before nginx sends).",
    '',
    table(
      [
        'read',
        'nginx MB/s',
        'API MB/s (÷ nginx)',
        'offloaded',
        'floor: loop',
        'floor: pipe',
        'minimal nginx',
        'API ÷ loop',
      ],
      [row('whole file', whole), row(`${size(rangeBytes)} ranges`, ranged)],
    ),
    '',
    apiWholeMet
      ? `The API alone meets ${THROUGHPUT_TARGET}× nginx on whole files (${fmt(ratio(whole, 'drs'), 2)}×).`
      : `The API alone misses ${THROUGHPUT_TARGET}× nginx on whole files (${fmt(ratio(whole, 'drs'), 2)}×); Node's floor in this run, ` +
        `a bare Node server on the same file, client and V8 flags (the faster of loop and pipe), reaches ${fmt(floorOf(whole), 2)}×: ` +
        `nginx hands the socket the page cache itself (\`sendfile\`, which Node does not offer), a Node server copies every byte ` +
        `in and out of its own memory. The API reaches ${fmt(ratio(whole, 'drs', 'loop'), 2)}× the bare loop.`,
    '',
    apiRangesMet
      ? `The API alone meets ${THROUGHPUT_TARGET}× nginx on ${size(rangeBytes)} ranges (${fmt(ratio(ranged, 'drs'), 2)}×).`
      : `The API alone misses ${THROUGHPUT_TARGET}× nginx on ${size(rangeBytes)} ranges (${fmt(ratio(ranged, 'drs'), 2)}×). A range pays a ` +
        `whole request's fixed cost for ${size(rangeBytes)}: its floor is the bare loop's range ` +
        `(${fmt(rangeMs('loop'), 1)} ms) plus what the API's framework costs any request over a bare Node server ` +
        `(${fmt(frameworkMs, 2)} ms: \`/health/live\` less the loop's one byte), ${fmt(apiRangeFloor, 2)}× nginx's ${fmt(rangeMs('nginx'), 1)} ms; ` +
        `the API's own work on top (the access check, opening the file) is its one byte less \`/health/live\`, ${fmt(Math.max(0, tinyMs('drs') - tinyMs('health')), 2)} ms.`,
    '',
    offloadMet
      ? `The offload meets ${OFFLOAD_TARGET}× nginx.`
      : `The offload misses ${OFFLOAD_TARGET}× nginx (${fmt(ratio(whole, 'offload'), 2)}× whole, ${fmt(ratio(ranged, 'offload'), 2)}× ranges); its floor on ranges, ` +
        `nginx's range plus the API's check before it (the offloaded one-byte read less nginx's: ${fmt(checkMs, 2)} ms, of which the trail record's write ` +
        `${fmt(Math.max(0, tinyMs('check') - tinyMs('untrailed')), 2)} ms and the framework's ${fmt(Math.max(0, tinyMs('health') - tinyMs('loop')), 2)} ms), is ${fmt(offloadRangeFloor, 2)}× nginx.`,
    '',
    table(
      ['bulk request', 'median ms', 'p99 ms', 'max ms'],
      [[`${manyFiles} objects`, fmt(median(bulk), 1), fmt(p99, 1), fmt(Math.max(...bulk), 1)]],
    ),
    '',
    `API process peak RSS (VmHWM): ${fmt(apiMemoryMiB, 0)} MiB. Targets ${verdict(met)}.`,
  ].join('\n');
  return { name: 'drs', title: 'DRS', markdown, targetsMet: met };
}
