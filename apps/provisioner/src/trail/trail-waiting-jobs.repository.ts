import { type IQueueBackend, PostgresQueueBackend, type Queue, RedisQueueBackend } from 'bullmq';
import type { TrailEvent } from './trail.queue';

/** A job waiting in the trail queue: its id and its event (all a delivery needs of it). */
export interface WaitingTrailJob {
  id: string;
  data: TrailEvent;
}

/**
 * The trail queue's waiting jobs read and removed in bulk, one round trip each, where BullMQ's
 * public `Queue` would take one per job (`getJobs` reads each job after its id, on both
 * backends; there is no bulk `remove`). Through the queue's own backend and connection:
 *
 * - Redis: the backend's `getJobs` script, which reads the ids and the jobs' hashes in one
 *   atomic call, oldest first when ascending (the wait list read from its tail, where workers
 *   take jobs). Removal: one `remove` per job, all sent at once on the queue's one connection
 *   (one round trip; each its own script, as BullMQ offers no bulk removal).
 * - PostgreSQL: one query on BullMQ's `job` table in its claiming order (`priority, seq`, as its
 *   `move_to_active` takes them), and one statement calling BullMQ's own `remove` function for
 *   each id (its bookkeeping kept, in one transaction).
 */
export class TrailWaitingJobsRepository {
  constructor(private readonly queue: Queue) {}

  /** Up to `count` waiting jobs, oldest first (a job without an event is skipped). */
  async oldest(count: number): Promise<WaitingTrailJob[]> {
    if (count <= 0) return [];
    const backend = this.queue.getBackend() as IQueueBackend;
    if (backend instanceof PostgresQueueBackend) {
      const { connection } = backend;
      await connection.waitUntilReady();
      const { rows } = await connection.pool.query<{ id: string; data: TrailEvent }>(
        `SELECT id, data FROM ${quoted(connection.schema)}.job
         WHERE queue = $1 AND state = 'waiting' ORDER BY priority, seq LIMIT $2`,
        [this.queue.name, count],
      );
      return rows.filter((row) => row.data?.id !== undefined);
    }
    if (backend instanceof RedisQueueBackend) {
      const [wait] = await backend.getJobs(['wait'], 0, count - 1, true);
      const jobs: WaitingTrailJob[] = [];
      for (const [id, fields] of wait ?? []) {
        const data = field(fields, 'data');
        if (data !== undefined) jobs.push({ id, data: JSON.parse(data) as TrailEvent });
      }
      return jobs;
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

/** The value of `name` in a hash read as [field, value, field, value, …]. */
function field(fields: string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

/** The schema as an identifier (QUEUE_PREFIX makes it: `bullmq_[a-z0-9_]+`, quoted anyway). */
function quoted(schema: string): string {
  return `"${schema.replace(/"/g, '""')}"`;
}
