import { OnApplicationShutdown } from '@nestjs/common';
import type { ImportProgress } from './import-progress';
import type { ImportJobFields, ImportState } from './import-record';
import type { ImportJobData } from './import.queue';

export interface ImportRecordFilter {
  state?: ImportState;
  source?: string;
}

/** One page of import jobs, newest first, each with the BullMQ state it was read in. */
export interface ImportJobPage {
  jobs: { job: ImportJobFields; jobState: string }[];
  /** How many import jobs match the filter in all. */
  count: number;
}

/** A job's lock as BullMQ holds it: the token of the worker running the job now. */
export interface JobLock {
  queue: string;
  jobId: string;
  token: string;
}

/** What the holder of a lock writes on an import record: fields of its data, its progress. */
export interface RecordWrite {
  /** Top-level fields of the job's data, merged into what the record holds. */
  data?: Partial<ImportJobData>;
  progress?: ImportProgress;
}

/**
 * Where `GET /imports` pages import jobs in the queue's own store, newest first (creation time,
 * then id, both descending), never reading every job: on Redis through an index of sorted sets
 * kept next to the queue's keys (RedisImportRecords); on BullMQ's PostgreSQL backend by a query
 * of its job table (PostgresImportRecords). Producers and the worker tell it when a job may
 * have changed state; the PostgreSQL store needs no telling.
 */
export abstract class ImportRecordsRepository implements OnApplicationShutdown {
  abstract page(filter: ImportRecordFilter, offset: number, limit: number): Promise<ImportJobPage>;

  /** The catalog accession of each of these import jobs that is registered, in one round trip. */
  abstract catalogAccessions(jobIds: string[]): Promise<Map<string, string>>;

  /**
   * Writes on an import job's record only while `lock` is held, checked in the same atomic
   * step as the write: by the import's attempt (its own lock) or by the registration job
   * reporting on it (that job's lock). False, with nothing written, when the lock has lapsed
   * or passed to another worker, or the job is gone: a stale worker never rewrites a record
   * it no longer owns. Data fields are merged, never the whole data replaced.
   */
  abstract writeLocked(importId: string, lock: JobLock, write: RecordWrite): Promise<boolean>;

  /** A job was added or may have changed state (queued, started, finished, retried). */
  abstract touched(jobId: string): Promise<void>;

  /** A job is about to be removed (its id is reused by a new import). */
  abstract removed(jobId: string): Promise<void>;

  abstract close(): Promise<void>;

  /**
   * Closed last: a worker stopping hands its imports over (beforeApplicationShutdown), which
   * writes on their records, after the modules' own destroy hooks have run.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }
}
