import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../apps/provisioner/test/support/dropzone-fixture';
import { queueEnv } from '../support/provisioner-app';
import { Random } from './support/random';
import { eventually, sleep } from './support/load-loop';
import { finalPath, partialProblem, ProvisionerRig, startRig, WorkerProcess, writeDatasets } from './support/provisioner-rig';

const DATASETS = 6;
const BIG = 256 * 1024 * 1024;
const KILLS = 5;

/**
 * Two worker processes copy six datasets while the test SIGKILLs a random one at a random moment,
 * five times, starting a replacement each time (a replacement still starting up may be the next
 * victim: that is a random point too). Every import must end imported exactly once, and
 * a dataset's final path must never show a partial copy.
 */
describe('imports while workers are killed at random points, repeatedly', () => {
  let rig: ProvisionerRig;
  const base = tempDir('robust-kill');
  const storage = join(base, 'storage');

  afterAll(async () => {
    await rig?.close();
    // Published trees are read-only; as their owner we may still remove them.
    rmSync(base, { recursive: true, force: true });
  });

  it('ends every import once, imported, with nothing partial ever visible and no staging left', async () => {
    const ids = writeDatasets(join(base, 'dropzone'), DATASETS, BIG);
    rig = await startRig({
      ...(await queueEnv('redis')),
      SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: join(base, 'dropzone') }]),
      STORAGE_ROOT: storage,
      // A dead worker's claim lapses after 2 s, so its import is taken up again quickly.
      IMPORT_LOCK_MS: '2000',
      IMPORT_MAX_ATTEMPTS: '20',
      IMPORT_CONCURRENCY: '2',
    });
    const workers: WorkerProcess[] = [await rig.startWorker(), await rig.startWorker()];
    const violations: string[] = [];
    const watcher = setInterval(() => {
      for (const id of ids) {
        const problem = partialProblem(storage, id, BIG);
        if (problem) violations.push(problem);
      }
    }, 25);
    const random = new Random(Number(process.env.ROBUSTNESS_SEED ?? 20261122));
    let records;
    try {
      const queued = await Promise.all(ids.map((id) => rig.importDataset(id)));
      expect(queued.map((q) => q.status)).toEqual(ids.map(() => 202));
      const importIds = queued.map((q) => q.record.id);
      for (let kill = 0; kill < KILLS; kill++) {
        // Strike while something is being copied (bounded wait), at a random moment of it.
        await eventually(async () => {
          const current = await Promise.all(importIds.map((id) => rig.record(id)));
          return current.some((r) => r?.state === 'running' && r.progress.bytes_done > 0);
        }, 30_000);
        await sleep(random.int(400));
        const alive = workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
        const victim = random.pick(alive);
        victim.child.kill('SIGKILL');
        await victim.exited;
        workers.push(await rig.spawnWorker());
      }
      // At least one live worker must finish the work.
      await workers[workers.length - 1].ready;
      records = await rig.waitAllEnded(importIds, 180_000);
    } finally {
      clearInterval(watcher);
    }

    process.stdout.write(
      `worker kills: ${KILLS} SIGKILLs over ${DATASETS} imports of ${BIG / 2 ** 20} MiB + 5 files; attempts ` +
        `${records.map((r) => r.attempts).join(', ')}\n`,
    );
    expect(records.map((r) => [r.key, r.state, r.error])).toEqual(ids.map((id) => [id, 'imported', null]));
    expect(violations).toEqual([]);
    // The kills did land mid-copy: some imports needed more than one attempt.
    expect(records.reduce((sum, r) => sum + r.attempts, 0)).toBeGreaterThan(DATASETS);
    for (const id of ids) expect(partialProblem(storage, id, BIG)).toBeUndefined();
    // Exactly one published copy per dataset, and no staging left by the dead attempts.
    expect(readdirSync(join(finalPath(storage, ids[0]), '..')).sort()).toEqual(ids);
    expect(readdirSync(join(storage, '.staging'))).toEqual([]);
  });
});
