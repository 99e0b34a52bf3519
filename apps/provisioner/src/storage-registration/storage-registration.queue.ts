import type { JobsOptions } from 'bullmq';

/**
 * The catalog-registration queue in one place: its name, job name, payload, job-id rule and
 * retry preset. An outbox: the import enqueues a registration when it publishes and never waits
 * on the catalog; this queue's worker delivers it.
 */
export const CATALOG_REGISTRATION_QUEUE = 'catalog-registration';

export enum CatalogRegistrationJobName {
  /** Registers one published dataset import in the catalog (POST /api/registrations). */
  Register = 'register',
}

export interface CatalogRegistrationJobData {
  /** The import job whose published copy is registered (and whose record shows the outcome). */
  import_id: string;
  /** The dataset's path in storage. */
  path: string;
  /** The day the copy was published (YYYY-MM-DD): the transfer date, fixed across retries. */
  published_on: string;
}

export interface CatalogRegistrationJobResult {
  accession: string;
}

/** What an import record says of its registration (`catalog` in the record). */
export type CatalogState = 'pending' | 'registered' | 'refused' | 'off';

export interface CatalogRegistrationState {
  state: CatalogState;
  accession: string | null;
  error: { code: string; message: string } | null;
}

/** One registration per import: adding it again (a retried or repeated import) finds this one. */
export function catalogRegistrationJobId(importId: string): string {
  return ['register', importId].join('-');
}

/**
 * Exponential backoff while the catalog is unreachable or answers 5xx: `attempts` tries,
 * waiting `delayMs` × 2^(n−1) after the n-th, so the last try comes `delayMs` × (2^(attempts−1)
 * − 1) after the first (defaults: 16 tries over about 9 hours). Failed jobs are kept for
 * inspection; completed ones too, since their id is what makes a registration happen once.
 */
export function catalogRegistrationRetryPreset(attempts: number, delayMs: number): JobsOptions {
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
