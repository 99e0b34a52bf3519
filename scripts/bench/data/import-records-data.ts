import { Job, Queue, UnrecoverableError, Worker } from 'bullmq';
import { sleep } from '../lib/processes';

/** What a bench record is, by its number: most imported, some rejected, failed and queued. */
export type BenchOutcome = 'imported' | 'rejected' | 'failed';

export function outcomeOf(n: number): BenchOutcome {
  if (n % 20 === 7) return 'rejected';
  if (n % 33 === 5) return 'failed';
  return 'imported';
}

export const BENCH_SOURCES = ['bench', 'other'];

function jobOf(n: number) {
  const kind = n % 10 === 0 ? 'submission' : 'dataset';
  const source = BENCH_SOURCES[n % 7 === 0 ? 1 : 0];
  const key = `K${String(n).padStart(7, '0')}`;
  return {
    name: kind,
    data: { source, key, path: `projects/P${n % 50}/SUB-${n % 5000}/data/raw/${key}` },
    opts: {
      jobId: `${source}-${kind}-${key}`,
      attempts: 1,
      removeOnComplete: false,
      removeOnFail: false,
    },
  };
}

/**
 * `total` import jobs in a queue the provisioner API reads, made the way the provisioner's own
 * jobs end up: added with the job ids and data it uses, then taken by a BullMQ worker that
 * completes most, fails some for good (rejected: `error.permanent`) and some after their last
 * attempt (failed); the last 2 % are added afterwards and stay queued. The records' index is not
 * told (the provisioner's worker would): the API builds it on its first listing.
 */
export async function fillImportRecords(
  queue: Queue,
  startWorker: (processor: (job: Job) => Promise<unknown>) => Worker,
  total: number,
): Promise<void> {
  const queued = Math.round(total * 0.02);
  const processed = total - queued;
  const worker = startWorker(async (job: Job) => {
    const n = Number(String(job.data.key).slice(1));
    const outcome = outcomeOf(n);
    if (outcome === 'imported') return { path: job.data.path, files: 1, bytes: 100, copied: true };
    const permanent = outcome === 'rejected';
    await job.updateData({
      ...job.data,
      error: { code: permanent ? 'preflight_failed' : 'source_unavailable', message: outcome, details: [], permanent },
    });
    throw permanent ? new UnrecoverableError(outcome) : new Error(outcome);
  });
  for (let start = 0; start < processed; start += 1000) {
    const chunk = Array.from({ length: Math.min(1000, processed - start) }, (_, i) => jobOf(start + i));
    await queue.addBulk(chunk);
  }
  for (;;) {
    const counts = await queue.getJobCounts('completed', 'failed');
    if (counts.completed + counts.failed >= processed) break;
    await sleep(250);
  }
  await worker.close();
  const rest = Array.from({ length: queued }, (_, i) => jobOf(processed + i));
  for (let start = 0; start < rest.length; start += 1000) await queue.addBulk(rest.slice(start, start + 1000));
}
