import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { getQueueToken } from '@nestjs/bullmq';
import type { Job, Queue } from 'bullmq';
import { startProvisionerApps, ProvisionerTestApps } from '../../../test/support/provisioner-app';
import { IMPORTS_QUEUE, SYNC_SCHEDULER_ID } from '../src/imports/import.queue';
import { DropzoneFixture, tempDir } from './support/dropzone-fixture';
import { until } from '../../../test/support/wait';
import { waitForImport, dropzoneEnv } from './support/provisioner-e2e';

jest.setTimeout(60_000);

/** Every second: ticks come quickly enough for a test. */
const EVERY_SECOND = '* * * * * *';

describe('IMPORT_SCHEDULE', () => {
  let apps: ProvisionerTestApps;
  let storageRoot: string;
  let queue: Queue;

  beforeAll(async () => {
    const base = tempDir('e2e-schedule');
    const dropzone = new DropzoneFixture(join(base, 'dropzone'));
    storageRoot = join(base, 'storage');
    dropzone
      .submission('SUB-1', { project: 'PRJ1', datasets: ['DS-A', 'DS-B', 'DS-LATER'] })
      .submission('SUB-2', { status: 'data_upload', project: 'PRJ1', datasets: ['DS-WAIT'] });
    for (const id of ['DS-A', 'DS-B'])
      dropzone.dataset(id, { submission: 'SUB-1', files: { 'a.txt': `${id} data` } });
    dropzone.dataset('DS-LATER', { submission: 'SUB-1', files: { 'a.txt': 'x' }, ready: false });
    dropzone.dataset('DS-WAIT', { submission: 'SUB-2', files: { 'a.txt': 'w' } });
    apps = await startProvisionerApps(
      // One job at a time: on a busy machine a tick can outlast the second between two, and
      // ticks running side by side each count the jobs the other queued (the job id makes them
      // one). What is counted here is what each tick finds, not how ticks interleave.
      await dropzoneEnv(dropzone, storageRoot, {
        IMPORT_SCHEDULE: EVERY_SECOND,
        IMPORT_CONCURRENCY: '1',
      }),
    );
    queue = apps.api.get<Queue>(getQueueToken(IMPORTS_QUEUE));
  });

  afterAll(async () => {
    await apps?.close();
  });

  it('registers a job scheduler with the cron pattern', async () => {
    expect(await queue.getJobScheduler(SYNC_SCHEDULER_ID)).toMatchObject({
      key: SYNC_SCHEDULER_ID,
      pattern: EVERY_SECOND,
    });
  });

  it('a tick imports the eligible submission, then its ready datasets; later ticks do nothing', async () => {
    for (const id of [
      'dropzone-submission-SUB-1',
      'dropzone-dataset-DS-A',
      'dropzone-dataset-DS-B',
    ]) {
      expect((await waitForImport(apps.api, id)).state).toBe('imported');
    }
    const ticks = () =>
      queue
        .getJobs(['completed'], 0, -1)
        .then((jobs: Job[]) => jobs.filter((j) => j.name === 'sync'));
    const first = await ticks();
    // Two more ticks after everything eligible and ready is in storage.
    const seen = first.length;
    // Ticks are due every second; a loaded machine delays them by seconds, not by twenty.
    await until(async () => (await ticks()).length >= seen + 2, 'two more ticks', 20_000, 200);
    const all = (await ticks()).sort((a, b) => a.timestamp - b.timestamp);
    const queued = all.map((j) => (j.returnvalue as { queued: number }).queued);
    // The first tick requested the submission, then both ready datasets; every later one nothing.
    expect(queued[0]).toBe(3);
    expect(queued.slice(1).every((q) => q === 0)).toBe(true);
    const jobs = (await queue.getJobs(['completed', 'failed', 'active', 'waiting', 'delayed']))
      .filter((j) => j.name !== 'sync')
      .sort((a, b) => a.timestamp - b.timestamp);
    const submissionQueuedAt = jobs.find((j) => j.name === 'submission')!.timestamp;
    for (const job of jobs.filter((j) => j.name === 'dataset'))
      expect(job.timestamp).toBeGreaterThanOrEqual(submissionQueuedAt);
    const imports = jobs.map((j) => j.id).sort();
    expect(imports).toEqual([
      'dropzone-dataset-DS-A',
      'dropzone-dataset-DS-B',
      'dropzone-submission-SUB-1',
    ]);
    expect(existsSync(join(storageRoot, 'projects/PRJ1/SUB-1/data/raw/DS-A'))).toBe(true);
    expect(existsSync(join(storageRoot, 'projects/PRJ1/SUB-2'))).toBe(false);
  });
});
