import type { Queue } from 'bullmq';
import { Pool, PoolClient } from 'pg';
import { PooledTransactionRepository } from '@app/platform';
import type { ImportJobFields } from './import-record';
import {
  ImportJobPage,
  ImportRecordFilter,
  ImportRecordsRepository,
  JobLock,
  RecordWrite,
} from './import-records.repository';
import { IMPORT_KINDS, ImportJobData, ImportJobResult } from './import.queue';
import { LISTED_DETAILS } from './record-bounds';

/** A row of BullMQ's job table, as much of it as a record needs (bigints come as strings). */
interface JobRow {
  id: string;
  name: string;
  state: string;
  data: ImportJobData;
  progress: unknown;
  return_value: ImportJobResult | null;
  failed_reason: string | null;
  added_at_ms: string;
  processed_at_ms: string | null;
  finished_at_ms: string | null;
  attempts_made: number;
  attempts_started: number;
}

const optionalNumber = (value: string | null): number | undefined =>
  value === null ? undefined : Number(value);

/** The fields of a record from the row itself: no second read per job. */
function fieldsOf(row: JobRow): ImportJobFields {
  return {
    id: row.id,
    name: row.name,
    data: row.data,
    progress: (row.progress ?? 0) as ImportJobFields['progress'],
    returnvalue: row.return_value ?? undefined,
    timestamp: Number(row.added_at_ms),
    processedOn: optionalNumber(row.processed_at_ms),
    finishedOn: optionalNumber(row.finished_at_ms),
    attemptsMade: row.attempts_made,
    attemptsStarted: row.attempts_started,
    failedReason: row.failed_reason ?? '',
  };
}

/**
 * A job's data as a listing reads it: an error's details cut in SQL to the first ones a listing
 * shows and the last (which may count those an earlier cut left out), the others counted in a
 * `more_problems` entry; recordFromJob cuts the rest (record-bounds.ts). A page of records
 * with 1,000 problems each never crosses the wire whole. The length comes from a window over
 * the elements: asked of the document in the filter, it would be read once per element.
 */
function listedData(data: string): string {
  const details = `${data}->'error'->'details'`;
  const head = LISTED_DETAILS + 1;
  return `CASE WHEN jsonb_typeof(${details}) = 'array' AND jsonb_array_length(${details}) > ${head + 1}
      THEN jsonb_set(${data}, '{error,details}',
        (SELECT jsonb_agg(t.d ORDER BY t.n) FROM (SELECT e.d, e.n, count(*) OVER () AS length
           FROM jsonb_array_elements(${details}) WITH ORDINALITY AS e(d, n)) t
         WHERE t.n <= ${head} OR t.n = t.length)
        || jsonb_build_array(jsonb_build_object('code', 'more_problems', 'message', '',
             'count', jsonb_array_length(${details}) - ${head + 1})))
      ELSE ${data} END AS data`;
}

/** Connections of the API's listings (BullMQ's backend keeps its own). */
const POOL_SIZE = 4;
const NAMES = `('${IMPORT_KINDS.join("', '")}')`;

/**
 * The record table, its indexes (one per filter, each ordered newest first), the function that
 * keeps it and the trigger, in the queue's schema (`s`). A row per import job: its source and
 * record state (a failed job is `rejected` when its error is final) and creation time.
 */
function schemaObjects(s: string): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${s}.provisioner_import_records (
       queue text NOT NULL,
       id text NOT NULL,
       source text NOT NULL,
       state text NOT NULL,
       added_at_ms bigint NOT NULL,
       PRIMARY KEY (queue, id))`,
    `CREATE INDEX IF NOT EXISTS provisioner_import_records_all
       ON ${s}.provisioner_import_records (queue, added_at_ms DESC, id COLLATE "C" DESC)`,
    `CREATE INDEX IF NOT EXISTS provisioner_import_records_state
       ON ${s}.provisioner_import_records (queue, state, added_at_ms DESC, id COLLATE "C" DESC)`,
    `CREATE INDEX IF NOT EXISTS provisioner_import_records_source
       ON ${s}.provisioner_import_records (queue, source, added_at_ms DESC, id COLLATE "C" DESC)`,
    `CREATE INDEX IF NOT EXISTS provisioner_import_records_source_state
       ON ${s}.provisioner_import_records (queue, source, state, added_at_ms DESC, id COLLATE "C" DESC)`,
    // The record state of a job (recordStateOf in import-record.ts, in SQL).
    `CREATE OR REPLACE FUNCTION ${s}.provisioner_record_state(state text, data jsonb) RETURNS text
     LANGUAGE sql IMMUTABLE AS $$
       SELECT CASE
         WHEN state = 'failed' AND data->'error'->>'permanent' = 'true' THEN 'rejected'
         WHEN state = 'failed' THEN 'failed'
         WHEN state = 'completed' THEN 'imported'
         WHEN state = 'active' THEN 'running'
         ELSE 'queued'
       END $$`,
    `CREATE OR REPLACE FUNCTION ${s}.provisioner_import_record() RETURNS trigger
     LANGUAGE plpgsql AS $$
     BEGIN
       IF TG_OP = 'DELETE' THEN
         DELETE FROM ${s}.provisioner_import_records WHERE queue = OLD.queue AND id = OLD.id;
         RETURN NULL;
       END IF;
       IF NEW.name NOT IN ${NAMES} THEN RETURN NULL; END IF;
       INSERT INTO ${s}.provisioner_import_records AS r (queue, id, source, state, added_at_ms)
       VALUES (NEW.queue, NEW.id, coalesce(NEW.data->>'source', ''),
               ${s}.provisioner_record_state(NEW.state::text, NEW.data), NEW.added_at_ms)
       ON CONFLICT (queue, id) DO UPDATE
         SET source = EXCLUDED.source, state = EXCLUDED.state, added_at_ms = EXCLUDED.added_at_ms
         WHERE (r.source, r.state, r.added_at_ms)
           IS DISTINCT FROM (EXCLUDED.source, EXCLUDED.state, EXCLUDED.added_at_ms);
       RETURN NULL;
     END $$`,
  ];
}

const TRIGGER = 'provisioner_import_record';

/**
 * Import records on BullMQ's PostgreSQL backend: a table of our own in the queue's schema, one
 * narrow row per import job (source, record state, creation time), kept by a trigger on BullMQ's
 * job table in the same transaction as every change BullMQ makes (whoever makes it: workers,
 * the dashboard, a removal), so it is exact at every moment with nothing to repair. A page is an
 * index scan of it joined to the job rows; the count an index-only count of narrow rows.
 * Installed once per schema, on the first listing: under an advisory lock (replicas) and a
 * lock that holds off writes to the job table while it is filled from the jobs already there.
 */
export class PostgresImportRecords extends ImportRecordsRepository {
  private readonly pool: Pool;
  private readonly schema: string;
  private installed: Promise<void> | null = null;

  constructor(
    private readonly queue: Queue,
    connection: { connectionString: string; schema: string },
  ) {
    super();
    this.pool = new Pool({ connectionString: connection.connectionString, max: POOL_SIZE });
    // Errors of idle clients (the server restarting) surface on the next query instead.
    this.pool.on('error', () => undefined);
    // QUEUE_PREFIX (^[a-z][a-z0-9_]{0,40}$) makes the schema name: safe as a quoted identifier.
    this.schema = `"${connection.schema}"`;
  }

  async page(filter: ImportRecordFilter, offset: number, limit: number): Promise<ImportJobPage> {
    await this.install();
    const s = this.schema;
    const matching = `r.queue = $1 AND ($2::text IS NULL OR r.source = $2)
      AND ($3::text IS NULL OR r.state = $3)`;
    const params = [this.queue.name, filter.source ?? null, filter.state ?? null];
    const [rows, counted] = await Promise.all([
      // The page is cut from the narrow table alone (an index-only scan, however deep the
      // offset); only its rows are joined to the jobs.
      this.pool.query<JobRow>(
        `WITH page AS (
           SELECT r.queue, r.id, r.added_at_ms FROM ${s}.provisioner_import_records r
           WHERE ${matching}
           ORDER BY r.added_at_ms DESC, r.id COLLATE "C" DESC LIMIT $4 OFFSET $5)
         SELECT j.id, j.name, j.state::text AS state, ${listedData('j.data')}, j.progress,
                j.return_value,
                j.failed_reason, j.added_at_ms, j.processed_at_ms, j.finished_at_ms,
                j.attempts_made, j.attempts_started
         FROM page p JOIN ${s}.job j ON j.queue = p.queue AND j.id = p.id
         ORDER BY p.added_at_ms DESC, p.id COLLATE "C" DESC`,
        [...params, limit, offset],
      ),
      this.pool.query<{ count: number }>(
        `SELECT count(*)::int AS count FROM ${s}.provisioner_import_records r WHERE ${matching}`,
        params,
      ),
    ]);
    return {
      jobs: rows.rows.map((row) => ({ job: fieldsOf(row), jobState: row.state })),
      count: counted.rows[0].count,
    };
  }

  async catalogAccessions(jobIds: string[]): Promise<Map<string, string>> {
    if (jobIds.length === 0) return new Map();
    const { rows } = await this.pool.query<{ id: string; accession: string }>(
      `SELECT id, data->'catalog'->>'accession' AS accession FROM ${this.schema}.job
       WHERE queue = $1 AND id = ANY($2::text[]) AND data->'catalog'->>'accession' IS NOT NULL`,
      [this.queue.name, jobIds],
    );
    return new Map(rows.map((row) => [row.id, row.accession]));
  }

  /**
   * One statement: the holder's row is locked (FOR SHARE) and checked to be active under the
   * token with its lock not yet lapsed, as BullMQ's own moves check it, then the record is
   * written. A stalled job's new claim, taking the row FOR UPDATE, waits for this or sees it.
   */
  async writeLocked(importId: string, lock: JobLock, write: RecordWrite): Promise<boolean> {
    const s = this.schema;
    const { rowCount } = await this.pool.query(
      `WITH holder AS (
         SELECT 1 FROM ${s}.job
         WHERE queue = $3 AND id = $4 AND state = 'active' AND lock_token = $5
           AND locked_until_ms > $6
         FOR SHARE)
       UPDATE ${s}.job j
       SET data = CASE WHEN $7::jsonb IS NULL THEN j.data ELSE j.data || $7::jsonb END,
           progress = COALESCE($8::jsonb, j.progress)
       WHERE j.queue = $1 AND j.id = $2 AND EXISTS (SELECT 1 FROM holder)`,
      [
        this.queue.name,
        importId,
        lock.queue,
        lock.jobId,
        lock.token,
        Date.now(),
        write.data === undefined ? null : JSON.stringify(write.data),
        write.progress === undefined ? null : JSON.stringify(write.progress),
      ],
    );
    return rowCount === 1;
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

  private install(): Promise<void> {
    this.installed ??= this.installOnce().catch((error: unknown) => {
      this.installed = null;
      throw error;
    });
    return this.installed;
  }

  private async installOnce(): Promise<void> {
    // The backend creates the job table when the queue connects.
    await this.queue.waitUntilReady();
    const filled = await new PooledTransactionRepository(this.pool).run(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
        `${this.schema}.${TRIGGER}`,
      ]);
      const fill = !(await this.hasTrigger(client));
      if (fill) await this.createAndFill(client);
      return fill;
    });
    // Counts are index-only scans once the visibility map knows the filled rows.
    if (filled) await this.pool.query(`VACUUM (ANALYZE) ${this.schema}.provisioner_import_records`);
  }

  private async hasTrigger(client: PoolClient): Promise<boolean> {
    const { rows } = await client.query(
      `SELECT 1 FROM pg_trigger WHERE tgname = $1 AND tgrelid = $2::regclass`,
      [TRIGGER, `${this.schema}.job`],
    );
    return rows.length > 0;
  }

  private async createAndFill(client: PoolClient): Promise<void> {
    const s = this.schema;
    for (const statement of schemaObjects(s)) await client.query(statement);
    // No job changes between the fill and the trigger taking over (readers are not held up).
    await client.query(`LOCK TABLE ${s}.job IN SHARE ROW EXCLUSIVE MODE`);
    await client.query(
      `CREATE OR REPLACE TRIGGER ${TRIGGER}
       AFTER INSERT OR DELETE OR UPDATE OF state, data ON ${s}.job
       FOR EACH ROW EXECUTE FUNCTION ${s}.provisioner_import_record()`,
    );
    // The jobs already there, filed as the trigger files them (rows left from a trigger since
    // dropped are not trusted).
    await client.query(`TRUNCATE ${s}.provisioner_import_records`);
    await client.query(
      `INSERT INTO ${s}.provisioner_import_records (queue, id, source, state, added_at_ms)
       SELECT queue, id, coalesce(data->>'source', ''),
              ${s}.provisioner_record_state(state::text, data), added_at_ms
       FROM ${s}.job WHERE name IN ${NAMES}`,
    );
  }
}
