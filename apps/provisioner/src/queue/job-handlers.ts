import type { Job } from 'bullmq';

/**
 * What runs each job of a queue: one handler per job name, typed by that job's result; `token`
 * is the job's lock as BullMQ holds it for this worker.
 */
export type JobHandlers<Results extends object> = {
  [Name in keyof Results]: (job: Job, token?: string) => Promise<Results[Name]>;
};

/**
 * Run by a processor at boot: a job name without a handler stops the process, naming the job,
 * rather than failing each such job once it is queued. The handler map's type catches most
 * gaps at compile time; the job names are plain strings at run time (read from the queue file,
 * or from a backend shared with a newer producer), which only this check sees.
 */
export function assertEveryJobHasHandler(
  queue: string,
  jobNames: readonly string[],
  handlers: Readonly<Record<string, unknown>>,
): void {
  const missing = jobNames.filter((name) => typeof handlers[name] !== 'function');
  if (missing.length > 0)
    throw new Error(
      `queue "${queue}": no handler for job ${missing.map((name) => `"${name}"`).join(', ')} ` +
        'in its processor; every job name of the queue file needs one',
    );
}
