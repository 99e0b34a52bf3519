import type { Queue } from 'bullmq';
import { Pool } from 'pg';
import {
  ImportJob,
  ImportJobPage,
  ImportRecordFilter,
  ImportRecordsRepository,
} from './import-records.repository';
import { IMPORT_KINDS } from './imports.queue';

/** The import job names (IMPORT_KINDS), spelled out so the partial index below applies. */
const IMPORT_NAMES = `name IN ('${IMPORT_KINDS.join("', '")}')`;

/**
 * The filter of a listing over BullMQ's job table (schema 0001/0002 of its PostgreSQL backend:
 * one row per job with `state`, `data` and `added_at_ms`). $1 queue, $2 source or null, $3
 * record state or null; a failed job is `rejected` when its error is final.
 */
const MATCHING = `
  queue = $1 AND ${IMPORT_NAMES}
  AND ($2::text IS NULL OR data->>'source' = $2)
  AND ($3::text IS NULL
    OR ($3 = 'queued' AND state IN ('waiting', 'delayed', 'waiting-children'))
    OR ($3 = 'running' AND state = 'active')
    OR ($3 = 'imported' AND state = 'completed')
    OR ($3 = 'failed' AND state = 'failed' AND coalesce(data->'error'->>'permanent', '') <> 'true')
    OR ($3 = 'rejected' AND state = 'failed' AND data->'error'->>'permanent' = 'true'))`;

/**
 * Import jobs queried straight from the job table of BullMQ's PostgreSQL backend: exact at
 * every moment, nothing to keep in step. Newest first by an index of our own on the table
 * (created once, `IF NOT EXISTS`), ties by id in byte order like the Redis index.
 */
export class PostgresImportRecords extends ImportRecordsRepository {
  private readonly pool: Pool;
  private readonly table: string;
  private prepared: Promise<void> | null = null;

  constructor(
    private readonly queue: Queue,
    connection: { connectionString: string; schema: string },
  ) {
    super();
    this.pool = new Pool({ connectionString: connection.connectionString, max: 2 });
    // Errors of idle clients (the server restarting) surface on the next query instead.
    this.pool.on('error', () => undefined);
    // QUEUE_PREFIX (^[a-z][a-z0-9_]{0,40}$) makes the schema name: safe as a quoted identifier.
    this.table = `"${connection.schema}".job`;
  }

  async page(filter: ImportRecordFilter, offset: number, limit: number): Promise<ImportJobPage> {
    await this.prepare();
    const params = [this.queue.name, filter.source ?? null, filter.state ?? null];
    const [rows, counted] = await Promise.all([
      this.pool.query<{ id: string; state: string }>(
        `SELECT id, state::text AS state FROM ${this.table} WHERE ${MATCHING}
         ORDER BY added_at_ms DESC, id COLLATE "C" DESC LIMIT $4 OFFSET $5`,
        [...params, limit, offset],
      ),
      this.pool.query<{ count: number }>(
        `SELECT count(*)::int AS count FROM ${this.table} WHERE ${MATCHING}`,
        params,
      ),
    ]);
    const jobs = await Promise.all(
      rows.rows.map(async (row) => ({
        job: (await this.queue.getJob(row.id)) as ImportJob | undefined,
        jobState: row.state,
      })),
    );
    // A job removed between the query and its read is left out of the page.
    return {
      jobs: jobs.filter((j): j is { job: ImportJob; jobState: string } => j.job !== undefined),
      count: counted.rows[0].count,
    };
  }

  touched(): Promise<void> {
    return Promise.resolve();
  }

  removed(): Promise<void> {
    return Promise.resolve();
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private prepare(): Promise<void> {
    this.prepared ??= (async () => {
      // The backend creates its tables when the queue connects.
      await this.queue.waitUntilReady();
      await this.pool
        .query(
          `CREATE INDEX IF NOT EXISTS provisioner_import_records_idx ON ${this.table}
           (queue, added_at_ms DESC, id COLLATE "C" DESC) WHERE ${IMPORT_NAMES}`,
        )
        .catch((error: { code?: string }) => {
          // Two replicas creating it at once: one of them loses the race, the index exists.
          if (error.code !== '23505' && error.code !== '42P07') throw error;
        });
    })().catch((error: unknown) => {
      this.prepared = null;
      throw error;
    });
    return this.prepared;
  }
}
