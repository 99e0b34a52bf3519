import { join } from 'node:path';
import request from 'supertest';
import { queueEnv, TEST_WRITE_KEY } from '../support/provisioner-app';
import { poll } from '../support/wait';
import { eventually, sleep } from './support/load-loop';
import { WorkerProcess, writeDatasets } from './support/provisioner-rig';
import { Random } from './support/random';
import { CATALOG_PROJECT } from './support/registration-catalog';
import { expectStoredAndRegisteredOnce, s3ImportRun, scratchEnv } from './support/s3-imports';

const DATASETS = 200;
const BIG = 256 * 1024;
const WORKERS = 4;
const KILLS = 6;

/**
 * Four worker processes, each with a scratch directory of its own and nothing shared but the
 * queue and the bucket, import 200 datasets into S3 while the test SIGKILLs a random one at a
 * random moment, six times, starting a replacement each time. Every import must end imported
 * exactly once and be registered in the catalog exactly once.
 */
describe('200 imports into S3 by four workers, killed at random', () => {
  const run = s3ImportRun('robust-s3-kills');
  afterAll(() => run.close());

  // Minutes on a loaded 2-core machine: 200 imports, each registered, six worker starts.
  it('ends every import imported once and registered once', async () => {
    const { base } = run;
    const ids = writeDatasets(join(base, 'dropzone'), DATASETS, BIG, CATALOG_PROJECT);
    const { rig, catalog, s3, bucket } = await run.start({
      ...(await queueEnv('redis')),
      SOURCES: JSON.stringify([
        { name: 'dropzone', type: 'dropzone', root: join(base, 'dropzone') },
      ]),
      // A dead worker's claim lapses after 3 s, so its import is taken up again quickly.
      IMPORT_LOCK_MS: '3000',
      IMPORT_MAX_ATTEMPTS: '20',
      IMPORT_CONCURRENCY: '2',
    });
    let started = 0;
    const spawn = () => rig.spawnWorker(scratchEnv(base, String(++started)));
    const workers: WorkerProcess[] = [];
    for (let i = 0; i < WORKERS; i++) workers.push(await spawn());
    await Promise.all(workers.map((w) => w.ready));
    const queued = await Promise.all(ids.map((id) => rig.importDataset(id)));
    expect(queued.map((q) => q.status)).toEqual(ids.map(() => 202));
    const importIds = queued.map((q) => q.record.id);

    // Counted from the listing (one request), not by reading 200 records at every poll.
    const count = async (state: string) => {
      const res = await request(rig.api.getHttpServer())
        .get(`/imports?state=${state}&per_page=1`)
        .set('X-API-Key', TEST_WRITE_KEY);
      return res.status === 200 ? (res.body.count as number) : 0;
    };
    const random = new Random(Number(process.env.ROBUSTNESS_SEED ?? 20261123));
    let killed = 0;
    for (let kill = 0; kill < KILLS; kill++) {
      if (!(await eventually(async () => (await count('running')) > 0, 60_000))) break;
      await sleep(random.int(1500));
      const alive = workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
      const victim = random.pick(alive);
      victim.child.kill('SIGKILL');
      await victim.exited;
      killed += 1;
      workers.push(await spawn());
    }
    await workers[workers.length - 1].ready;
    await poll(
      async () =>
        (await count('imported')) + (await count('failed')) + (await count('rejected')) >= DATASETS
          ? true
          : undefined,
      'every import to end',
      300_000,
      500,
    );
    const records = await rig.waitAllEnded(importIds, 60_000);
    expect(records.map((r) => [r.key, r.state, r.error])).toEqual(
      ids.map((id) => [id, 'imported', null]),
    );
    expect(killed).toBeGreaterThanOrEqual(KILLS / 2);

    await expectStoredAndRegisteredOnce(rig, catalog, s3, bucket, records);
    process.stdout.write(
      `s3 worker kills: ${killed} SIGKILLs among ${WORKERS} workers over ${DATASETS} imports into S3; ` +
        `attempts above one: ${records.filter((r) => r.attempts > 1).length}\n`,
    );
  }, 480_000);
});
