import type { JobsOptions } from 'bullmq';

/**
 * The storage-registration queue in one place: its name, job name, payload, job-id rule and
 * retry preset. An outbox: the import enqueues a registration when it publishes and never waits
 * on the catalog; this queue's worker delivers it to the catalog's storage-registrations route.
 *
 * The code is named for what is registered (a storage copy, as the catalog's end is); the queue
 * name, the job name, the metric `provisioner_catalog_registrations_total` and the CATALOG_*
 * settings keep their old names, because queued jobs, dashboards, alerts and deployments hold
 * them.
 */
export const STORAGE_REGISTRATION_QUEUE = 'catalog-registration';

export enum StorageRegistrationJobName {
  /** Registers one published dataset import in the catalog (POST /api/registrations). */
  Register = 'register',
}

export interface StorageRegistrationJobData {
  /** The import job whose published copy is registered (and whose record shows the outcome). */
  import_id: string;
  /** The dataset's path in storage. */
  path: string;
  /** The day the copy was published (YYYY-MM-DD): the transfer date, fixed across retries. */
  published_on: string;
}

export interface StorageRegistrationJobResult {
  accession: string;
}

/** Each job name's result: what the processor's handler map is typed by. */
export interface StorageRegistrationJobResults {
  [StorageRegistrationJobName.Register]: StorageRegistrationJobResult;
}

/** One registration per import: adding it again (a retried or repeated import) finds this one. */
export function storageRegistrationJobId(importId: string): string {
  return ['register', importId].join('-');
}

/**
 * Exponential backoff while the catalog is unreachable or answers 5xx: `attempts` tries,
 * waiting `delayMs` × 2^(n−1) after the n-th, so the last try comes `delayMs` × (2^(attempts−1)
 * − 1) after the first (defaults: 16 tries over about 9 hours). Failed jobs are kept for
 * inspection; completed ones too, since their id is what makes a registration happen once.
 */
export function storageRegistrationRetryPreset(attempts: number, delayMs: number): JobsOptions {
  return {
    attempts,
    backoff: { type: 'exponential', delay: delayMs },
    removeOnComplete: false,
    removeOnFail: false,
  };
}

/** The retry window of a preset, in ms (what docs/provisioner.md states for the defaults). */
export function catalogRetryWindowMs(attempts: number, delayMs: number): number {
  return delayMs * (2 ** (attempts - 1) - 1);
}
