// Where the trail's cost in a DRS access decision goes (issue 59 item 5): the built apps set up
// as the trail bench does, then decisions timed in interleaved rounds on sides: `off` (the API
// without CATALOG_API_KEY), `on` (the outbox written, the worker delivering), `on-paused` (the
// outbox written, the trail queue paused: no delivery competing for the CPUs), `off-paused`.
//   npx ts-node -r tsconfig-paths/register --transpile-only scripts/bench/probes/trail-drs-probe.ts
import { Queue } from 'bullmq';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPrivateRedis } from '../../lib/private-redis';
import { migratedCatalogDatabase, startCatalog } from '../lib/catalog-process';
import { timePost } from '../lib/http-load';
import { freePort, postgresCpuMs } from '../lib/processes';
import { provisionerEnv, startProvisionerApi, startWorker } from '../lib/provisioner-process';
import { drsKeys, drsProject, grantedPassports, importAndRegister } from '../lib/drs-setup';
import { percentile } from '../lib/report';
import { roundOrder } from '../lib/rounds';
import { smallFile, writeDataset } from '../data/drs-data';
import { TRAIL_QUEUE } from '../../../apps/provisioner/src/trail/trail.queue';

const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 6);
const PER_ROUND = Number(process.env.PROBE_PER_ROUND ?? 200);
const PROJECT = 'BENCH-TRAIL';
type Side = 'off' | 'on' | 'on-paused' | 'off-paused';
const SIDES: Side[] = (process.env.PROBE_SIDES?.split(',') as Side[]) ?? ['off', 'on', 'on-paused'];

async function main(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), 'trail-probe-'));
  mkdirSync(base, { recursive: true });
  const { registrationKey, brokerKey, catalogPort, catalogUrl, catalogEnv } = await drsKeys(base);
  const catalogDb = await migratedCatalogDatabase();
  const redis = await startPrivateRedis({ dir: join(base, 'redis') });
  const catalog = await startCatalog(
    { ...catalogDb.env, ...catalogEnv },
    // PROBE_CATALOG_PROFILE=<dir>: the catalog's CPU profile, written there when it stops.
    process.env.PROBE_CATALOG_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROBE_CATALOG_PROFILE}`] : [],
    catalogPort,
  );
  const queue = new Queue(TRAIL_QUEUE, { connection: { url: redis.url }, prefix: 'bench' });
  try {
    const dropzone = join(base, 'dropzone');
    writeDataset(dropzone, 'TRAIL-DS', { 'a.txt': smallFile('trail probe\n') });
    await drsProject(catalog.url, dropzone, { acronym: PROJECT, name: 'Trail probe', datasets: ['TRAIL-DS'] });
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
        ...(process.env.PROBE_WAIT_MS ? { TRAIL_BATCH_WAIT_MS: process.env.PROBE_WAIT_MS } : {}),
      },
    });
    const worker = await startWorker(env);
    const onApi = await startProvisionerApi(env, onPort);
    const offApi = await startProvisionerApi(
      { ...env, CATALOG_API_KEY: undefined, DRS_PUBLIC_URL: `http://127.0.0.1:${offPort}` },
      offPort,
    );
    try {
      const accession = await importAndRegister(onApi.url, 'TRAIL-DS');
      const passports = await grantedPassports(catalog.url, catalogDb.database.url, 'probe-reader', [accession], 'Trail probe');
      const object = `${PROJECT}~SUB-DRS~TRAIL-DS`;
      const out = new Map<Side, number[]>(SIDES.map((s) => [s, []]));
      // CPU time (ms) each process spent during each side's rounds, from /proc.
      const pids = { postgres: -1, client: process.pid, onApi: onApi.child.pid!, offApi: offApi.child.pid!, worker: worker.child.pid!, catalog: catalog.child.pid!, redis: redis.child.pid! };
      const cpu = (pid: number) => {
        if (pid === -1) return postgresCpuMs();
        const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
        return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
      };
      const cpuBy = new Map<Side, Record<string, number>>(SIDES.map((s) => [s, Object.fromEntries(Object.keys(pids).map((k) => [k, 0]))]));
      const loads: number[] = [];
      const stats = await (queue.getBackend() as unknown as { client: Promise<import('ioredis').Redis> }).client;
      await stats.config('RESETSTAT');
      for (let round = 0; round < ROUNDS; round++) {
        loads.push(loadavg()[0]);
        for (const side of roundOrder(SIDES, round)) {
          if (side.endsWith('paused')) await queue.pause();
          else await queue.resume();
          const api = side.startsWith('on') ? onApi.url : offApi.url;
          const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpu(pid)]));
          for (let i = 0; i <= PER_ROUND; i++) {
            const r = await timePost(`${api}/ga4gh/drs/v1/objects/${object}/access/https`, JSON.stringify({ passports }));
            if (r.status !== 200) throw new Error(`DRS access (${side}): ${r.status}`);
            if (i > 0) out.get(side)!.push(r.ms);
          }
          for (const [k, pid] of Object.entries(pids)) cpuBy.get(side)![k] += cpu(pid) - before[k];
        }
      }
      await queue.resume();
      if (process.env.PROBE_STATS) console.log((await stats.info('commandstats')).split('\n').filter((l) => l.startsWith('cmdstat')).map((l) => l.replace(/,rejected.*/, '')).join('\n'));
      for (const [side, ms] of out) {
        console.log(`${side.padEnd(11)} p50 ${percentile(ms, 50).toFixed(2)} p90 ${percentile(ms, 90).toFixed(2)} p99 ${percentile(ms, 99).toFixed(2)} ms (n ${ms.length}) cpu ms/call ${Object.entries(cpuBy.get(side)!).map(([k, v]) => `${k} ${(v / ms.length).toFixed(2)}`).join(' ')}`);
      }
      console.log(`load ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}`);
    } finally {
      await offApi.stop();
      await onApi.stop();
      await worker.stop();
    }
  } finally {
    await queue.close();
    await catalog.stop();
    await redis.stop();
    await catalogDb.database.drop();
    rmSync(base, { recursive: true, force: true });
  }
}

void main();
