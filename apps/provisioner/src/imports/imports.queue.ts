import type { JobsOptions } from 'bullmq';

/**
 * The imports queue in one place: its name, job names, payloads, job-id rule and retry preset.
 * Producers and the processor import only from here.
 */
export const IMPORTS_QUEUE = 'imports';

export enum ImportJobName {
  /** A no-op round trip: proves an API can enqueue and a worker completes. */
  Ping = 'ping',
}

export interface ImportJobPayloads {
  [ImportJobName.Ping]: { sentAt: string };
}

export interface ImportJobResults {
  [ImportJobName.Ping]: { pong: true; receivedAt: string };
}

/**
 * Job ids are derived from what the job is about, so adding the same work twice (a second
 * request, a retry, the scheduler) finds the existing job instead of starting another copy.
 */
export function importJobId(...parts: string[]): string {
  return parts.join('-');
}

/** Exponential backoff for transient faults; failed jobs are kept for inspection. */
export function importRetryPreset(maxAttempts: number): JobsOptions {
  return {
    attempts: maxAttempts,
    backoff: { type: 'exponential', delay: 5_000 },
    removeOnComplete: false,
    removeOnFail: false,
  };
}
