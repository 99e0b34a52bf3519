import { Client } from 'pg';
import type { PostgresQueueConnection } from '../queue/queue-backend';
import { TRAIL_QUEUE } from './trail.queue';

const TRIGGER = 'provisioner_trail_job_keeps_place';

/**
 * On BullMQ's PostgreSQL backend, a job handed back from active to waiting (a stalled job, or
 * one moved back by `Worker.RateLimitError`) is given a new `seq`, the last place in the queue;
 * on Redis it goes back to the front (RPUSH onto the end workers take from). For the trail that
 * would chain the event after everything queued since. This trigger on BullMQ's job table keeps
 * a trail job's `seq` on that move, so it returns to its own place, at the front, as on Redis.
 * Installed once per schema (CREATE OR REPLACE for the function; the trigger only when missing,
 * under an advisory lock for replicas starting together), after BullMQ created its tables.
 */
export class TrailQueuePlaceRepository {
  constructor(private readonly connection: PostgresQueueConnection) {}

  /** Installs the function and, when missing, the trigger (one short-lived connection). */
  async install(): Promise<void> {
    const connection = this.connection;
    // QUEUE_PREFIX (^[a-z][a-z0-9_]{0,40}$) makes the schema name: safe as a quoted identifier.
    const s = `"${connection.schema}"`;
    const client = new Client({ connectionString: connection.connectionString });
    // A dropped connection rejects the query in flight; the event itself must not crash the process.
    client.on('error', () => undefined);
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${s}.${TRIGGER}`]);
      await client.query(
        `CREATE OR REPLACE FUNCTION ${s}.${TRIGGER}() RETURNS trigger
         LANGUAGE plpgsql AS $$
         BEGIN
           NEW.seq := OLD.seq;
           RETURN NEW;
         END $$`,
      );
      const { rows } = await client.query(
        'SELECT 1 FROM pg_trigger WHERE tgname = $1 AND tgrelid = $2::regclass',
        [TRIGGER, `${s}.job`],
      );
      if (rows.length === 0) {
        await client.query(
          `CREATE TRIGGER ${TRIGGER} BEFORE UPDATE OF state ON ${s}.job
           FOR EACH ROW
           WHEN (OLD.queue = '${TRAIL_QUEUE}' AND OLD.state = 'active' AND NEW.state = 'waiting')
           EXECUTE FUNCTION ${s}.${TRIGGER}()`,
        );
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
