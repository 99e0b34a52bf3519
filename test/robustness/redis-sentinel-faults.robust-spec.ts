import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import request from 'supertest';
import { uniqueQueuePrefix } from '../support/databases';
import { metricSample } from '../support/prometheus-text';
import { SentinelSet, startSentinelSet } from '../support/redis-servers';
import { poll } from '../support/wait';
import { eventually, sleep } from './support/load-loop';
import { ProvisionerRig, WorkerProcess, writeDatasets } from './support/provisioner-rig';
import { CATALOG_PROJECT } from './support/registration-catalog';
import { expectStoredAndRegisteredOnce, s3ImportRun, scratchEnv } from './support/s3-imports';

const DATASETS = 20;
const BIG = 40 * 1024 * 1024;
/** The import lock of this run; the outage below lasts longer. */
const LOCK_MS = 10_000;
const OUTAGE_MS = LOCK_MS + 5000;

interface Health {
  status: number;
  checks: Record<string, string>;
}

async function apiHealth(rig: ProvisionerRig): Promise<Health> {
  const res = await request(rig.api.getHttpServer()).get('/health/ready');
  const body = res.body as {
    checks?: Record<string, string>;
    more?: { checks?: Record<string, string> };
  };
  return { status: res.status, checks: body.checks ?? body.more?.checks ?? {} };
}

async function health(url: string): Promise<Health> {
  try {
    const res = await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(5000) });
    const body = (await res.json()) as {
      checks?: Record<string, string>;
      more?: { checks?: Record<string, string> };
    };
    return { status: res.status, checks: body.checks ?? body.more?.checks ?? {} };
  } catch (error) {
    return { status: 0, checks: { request: (error as Error).message } };
  }
}

async function workerMetric(
  worker: WorkerProcess,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const text = await fetch(`http://127.0.0.1:${worker.port}/metrics`).then((r) => r.text());
  return metricSample(text, name, { queue: 'imports', ...labels });
}

/**
 * Twenty imports into S3 run in two worker processes on a Sentinel set (a primary, a replica,
 * three Sentinels), while: SENTINEL FAILOVER; then the new primary killed mid-copy; then both
 * data nodes gone for longer than the import lock. No worker is restarted. Every import must
 * end imported once and be registered in the catalog once; each worker must take jobs again
 * after each fault (the time from the fault to its next job is reported); readiness and
 * metrics must tell of the outage while it lasts and after.
 */
describe('imports on a Sentinel set through a failover, a killed primary and an outage past the lock', () => {
  const run = s3ImportRun('robust-sentinel');
  let set: SentinelSet | undefined;

  afterAll(async () => {
    await run.close();
    await set?.stop();
  });

  it('ends every import imported and registered once, and every worker resumes by itself', async () => {
    const { base } = run;
    const ids = writeDatasets(join(base, 'dropzone'), DATASETS, BIG, CATALOG_PROJECT);
    const password = randomBytes(12).toString('hex');
    set = await startSentinelSet({ dir: join(base, 'redis'), password, downAfterMs: 1000 });
    const { rig, catalog, s3, bucket } = await run.start({
      REDIS_SENTINELS: set.sentinels,
      REDIS_SENTINEL_NAME: set.name,
      REDIS_PASSWORD: password,
      QUEUE_PREFIX: uniqueQueuePrefix(),
      SOURCES: JSON.stringify([
        { name: 'dropzone', type: 'dropzone', root: join(base, 'dropzone') },
      ]),
      IMPORT_LOCK_MS: String(LOCK_MS),
      IMPORT_MAX_ATTEMPTS: '20',
      IMPORT_CONCURRENCY: '2',
    });
    const workers = [
      await rig.startWorker(scratchEnv(base, '1')),
      await rig.startWorker(scratchEnv(base, '2')),
    ];
    const queued = await Promise.all(ids.map((id) => rig.importDataset(id)));
    expect(queued.map((q) => q.status)).toEqual(ids.map(() => 202));
    const importIds = queued.map((q) => q.record.id);

    const running = () =>
      eventually(async () => {
        const records = await Promise.all(importIds.map((id) => rig.record(id)));
        return records.some((r) => r?.state === 'running' && r.progress.bytes_done > 0);
      }, 60_000);
    /**
     * Seconds from `since` until each worker took a job again (its metric moves past it), and
     * as each worker measured it from its connection's return (a job is taken only when a copy
     * in flight leaves a place free).
     */
    const resumed = async (since: number) => {
      const taken = await tookJobAgain(since);
      const fromReturn = await Promise.all(
        workers.map((w) => workerMetric(w, 'provisioner_queue_worker_resume_seconds')),
      );
      return (
        `next job taken after ${taken.map((x) => x.toFixed(1)).join(', ')} s ` +
        `(after the connection's return: ${fromReturn.map((x) => (x ?? NaN).toFixed(1)).join(', ')} s)`
      );
    };
    const tookJobAgain = (since: number) =>
      Promise.all(
        workers.map((worker) =>
          poll(
            async () => {
              const taken = await workerMetric(
                worker,
                'provisioner_queue_worker_last_job_taken_timestamp_seconds',
              );
              return taken !== undefined && taken * 1000 > since ? taken - since / 1000 : undefined;
            },
            `worker on ${worker.port} to take a job after the fault`,
            90_000,
            100,
          ),
        ),
      );
    const report: string[] = [];

    // 1. A failover asked of the Sentinels.
    expect(await running()).toBe(true);
    const failoverAt = Date.now();
    const { from, to } = await set.failover();
    report.push(`SENTINEL FAILOVER ${from} -> ${to}: ${await resumed(failoverAt)}`);

    // 2. The new primary killed while imports copy: the Sentinels promote the old one back.
    expect(await running()).toBe(true);
    const killedAt = Date.now();
    const killed = await set.killPrimary();
    const promoted = await set.awaitPrimaryOtherThan(killed, 30_000);
    await set.restartAsReplica(killed);
    report.push(`primary ${killed} killed, ${promoted} promoted: ${await resumed(killedAt)}`);

    // 3. Both data nodes gone for longer than the import lock.
    expect(await running()).toBe(true);
    const primary = await set.primaryPort();
    await set.stopDataNodes();
    const stoppedAt = Date.now();
    await sleep(Math.min(5000, OUTAGE_MS / 2));
    const during = {
      api: await apiHealth(rig),
      workers: await Promise.all(workers.map((w) => health(`http://127.0.0.1:${w.port}`))),
    };
    await sleep(OUTAGE_MS - (Date.now() - stoppedAt));
    await set.startDataNodes(primary);
    const backAt = Date.now();
    report.push(
      `Redis gone ${((backAt - stoppedAt) / 1000).toFixed(1)} s (lock ${LOCK_MS / 1000} s): ${await resumed(backAt)}`,
    );
    // Readiness said so meanwhile: the API's queue check and each worker's queue and workers.
    expect(during.api.status).toBe(503);
    expect(during.api.checks.queue).toMatch(/^down: /);
    for (const worker of during.workers) {
      expect(worker.status).toBe(503);
      expect(worker.checks.queue).toMatch(/^down: /);
      expect(worker.checks.workers).toMatch(/^down: .*imports: connection lost/);
    }

    const records = await rig.waitAllEnded(importIds, 240_000);
    expect(records.map((r) => [r.key, r.state, r.error])).toEqual(
      ids.map((id) => [id, 'imported', null]),
    );
    await expectStoredAndRegisteredOnce(rig, catalog, s3, bucket, records);
    // Afterwards readiness is back, and the metrics keep what happened.
    for (const worker of workers) {
      expect((await health(`http://127.0.0.1:${worker.port}`)).status).toBe(200);
      expect(
        await workerMetric(worker, 'provisioner_queue_worker_disconnects_total'),
      ).toBeGreaterThanOrEqual(2);
      // The outage past the lock is among the outages counted (a short reconnect can follow it
      // while the restarted nodes settle their roles, and be the last one).
      const outages = await workerMetric(worker, 'provisioner_queue_worker_outage_seconds_count');
      const shorter = await workerMetric(worker, 'provisioner_queue_worker_outage_seconds_bucket', {
        le: String(LOCK_MS / 1000),
      });
      expect((outages ?? 0) - (shorter ?? 0)).toBeGreaterThanOrEqual(1);
      expect(
        await workerMetric(worker, 'provisioner_queue_worker_last_outage_seconds'),
      ).toBeGreaterThan(0);
      expect(await workerMetric(worker, 'provisioner_queue_worker_connected')).toBe(1);
    }
    expect((await apiHealth(rig)).status).toBe(200);
    process.stdout.write(
      `sentinel faults: ${DATASETS} imports of ${BIG / 2 ** 20} MiB into S3, 2 workers; ${report.join('; ')}; attempts ${records.map((r) => r.attempts).join(', ')}\n`,
    );
    // Three faults, each waited out (imports running again, each worker's next job), then 800 MiB
    // of imports to end: about 150 s on a quiet machine, past the suite's 240 s on a starved one.
    // Each wait above has its own deadline and names what it waited for.
  }, 480_000);
});
