import { OnModuleDestroy } from '@nestjs/common';
import type { ImportJobFields, ImportState } from './import-record';

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

/**
 * Where `GET /imports` pages import jobs in the queue's own store, newest first (creation time,
 * then id, both descending), never reading every job: on Redis through an index of sorted sets
 * kept next to the queue's keys (RedisImportRecords); on BullMQ's PostgreSQL backend by a query
 * of its job table (PostgresImportRecords). Producers and the worker tell it when a job may
 * have changed state; the PostgreSQL store needs no telling.
 */
export abstract class ImportRecordsRepository implements OnModuleDestroy {
  abstract page(filter: ImportRecordFilter, offset: number, limit: number): Promise<ImportJobPage>;

  /** The catalog accession of each of these import jobs that is registered, in one round trip. */
  abstract catalogAccessions(jobIds: string[]): Promise<Map<string, string>>;

  /** A job was added or may have changed state (queued, started, finished, retried). */
  abstract touched(jobId: string): Promise<void>;

  /** A job is about to be removed (its id is reused by a new import). */
  abstract removed(jobId: string): Promise<void>;

  abstract close(): Promise<void>;

  async onModuleDestroy(): Promise<void> {
    await this.close();
  }
}
