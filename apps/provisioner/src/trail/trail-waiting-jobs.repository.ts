import { type IQueueBackend, PostgresQueueBackend, type Queue, RedisQueueBackend } from 'bullmq';
import { eventsInTrailJob, type TrailEvent, trailEventsOf } from './trail.queue';

/** A job waiting in the trail queue: its id and its events, in order (all a delivery needs). */
export interface WaitingTrailJob {
  id: string;
  events: TrailEvent[];
}

/**
 * The trail queue's waiting jobs read and removed in bulk, one round trip each, where BullMQ's
 * public `Queue` would take one per job (`getJobs` reads each job after its id, on both
 * backends; there is no bulk `remove`). Through the queue's own backend and connection. A
 * read is bounded by events, not jobs: it takes the oldest jobs whose events fit, counted from
 * the jobs' ids (`eventsInTrailJob`), so a queue of bulk decisions' jobs is never read whole.
 *
 * - Redis: the waiting ids oldest first (`getRanges`), then the jobs that fit through the
 *   backend's `getJobs` script, which reads the ids and the jobs' hashes in one atomic call,
 *   oldest first when ascending (the wait list read from its tail, where workers take jobs).
 *   Removal: one `remove` per job, all sent at once on the queue's one connection (one round
 *   trip; each its own script, as BullMQ offers no bulk removal).
 * - PostgreSQL: one query on BullMQ's `job` table in its claiming order (`priority, seq`, as its
 *   `move_to_active` takes them), the running count of events computed there, and one statement
 *   calling BullMQ's own `remove` function for each id (its bookkeeping kept, in one
 *   transaction).
 */
export class TrailWaitingJobsRepository {
  constructor(private readonly queue: Queue) {}

  /**
   * The oldest waiting jobs holding at most `events` events in all (none when the oldest holds
   * more), oldest first; a job without events is skipped.
   */
  async oldest(events: number): Promise<WaitingTrailJob[]> {
    if (events <= 0) return [];
    const backend = this.queue.getBackend() as IQueueBackend;
    if (backend instanceof PostgresQueueBackend) {
      const { connection } = backend;
      await connection.waitUntilReady();
      // A job holds one event at least: the first `events` jobs are all that can fit.
      const { rows } = await connection.pool.query<{ id: string; data: unknown }>(
        `SELECT id, data FROM (
           SELECT id, data, priority, seq, sum(
               CASE WHEN id ~ '^events-[1-9][0-9]*-[0-9a-f]{32}$'
                 THEN split_part(id, '-', 2)::bigint ELSE 1 END
             ) OVER (ORDER BY priority, seq ROWS UNBOUNDED PRECEDING) AS upto
           FROM ${quoted(connection.schema)}.job
           WHERE queue = $1 AND state = 'waiting' ORDER BY priority, seq LIMIT $2
         ) oldest WHERE upto <= $2 ORDER BY priority, seq`,
        [this.queue.name, events],
      );
      return fitting(rows, events);
    }
    if (backend instanceof RedisQueueBackend) {
      const ids = await this.queue.getRanges(['wait'], 0, events - 1, true);
      let jobs = 0;
      for (let sum = 0; jobs < ids.length; jobs += 1) {
        sum += eventsInTrailJob(ids[jobs]);
        if (sum > events) break;
      }
      if (jobs === 0) return [];
      const [wait] = await backend.getJobs(['wait'], 0, jobs - 1, true);
      return fitting(
        (wait ?? []).map(([id, fields]) => {
          const data = field(fields, 'data');
          return { id, data: data === undefined ? undefined : (JSON.parse(data) as unknown) };
        }),
        events,
      );
    }
    throw new Error(`trail queue: no bulk read for the ${backend.constructor.name} backend`);
  }
  /** Removes the jobs (waiting ones: a job active or gone is left as it is). */
  async remove(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    const backend = this.queue.getBackend() as IQueueBackend;
    if (backend instanceof PostgresQueueBackend) {
      const { connection } = backend;
      await connection.waitUntilReady();
      const s = quoted(connection.schema);
      await connection.pool.query(
        `SELECT ${s}.remove($1, id, false) FROM unnest($2::text[]) AS id`,
        [this.queue.name, ids],
      );
      return;
    }
    const failed = (
      await Promise.allSettled(ids.map((id) => this.queue.remove(id, { removeChildren: false })))
    ).filter((result) => result.status === 'rejected');
    if (failed.length > 0) {
      throw new Error(
        `${failed.length} of ${ids.length} not removed: ${String((failed[0] as PromiseRejectedResult).reason)}`,
      );
    }
  }
}

/**
 * The jobs read, as their events, while they fit in `events` (what the ids counted is checked
 * against what the jobs hold).
 */
function fitting(rows: { id: string; data: unknown }[], events: number): WaitingTrailJob[] {
  const jobs: WaitingTrailJob[] = [];
  let sum = 0;
  for (const row of rows) {
    const held = trailEventsOf(row.data);
    if (held === undefined) continue;
    sum += held.length;
    if (sum > events) break;
    jobs.push({ id: row.id, events: held });
  }
  return jobs;
}

/** The value of `name` in a hash read as [field, value, field, value, …]. */
function field(fields: string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

/** The schema as an identifier (QUEUE_PREFIX makes it: `bullmq_[a-z0-9_]+`, quoted anyway). */
function quoted(schema: string): string {
  return `"${schema.replace(/"/g, '""')}"`;
}
