import Redis from 'ioredis';
import { releaseS3Server } from './s3-server';
import { testServices, withAdminClient } from './test-services';

/** Connections dropping the run's databases side by side. */
const DROPS_AT_ONCE = 8;

/**
 * Stops the run's PgBouncer, removes every database and queue key this run created, then stops
 * leaves the S3 server (stopped when this run was its last user) and stops an embedded Postgres.
 */
export default async function globalTeardown(): Promise<void> {
  const { postgresServerUrl, redisUrl, runId } = testServices();
  // First, so no pooled server connection holds a database about to be dropped.
  await (globalThis as { __pgBouncer?: { stop(): Promise<void> } }).__pgBouncer?.stop();
  const { rows } = await withAdminClient(postgresServerUrl, (client) =>
    client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [
      `${runId}%`,
    ]),
  );
  // Several at once: each DROP DATABASE waits for a checkpoint of its own, and PostgreSQL serves
  // the requests that arrive together with one (80 drops one by one took 3.5 min on a busy machine).
  const names = rows.map((r) => r.datname);
  await Promise.all(
    Array.from({ length: Math.min(DROPS_AT_ONCE, names.length) }, () =>
      withAdminClient(postgresServerUrl, async (client) => {
        for (let name = names.pop(); name !== undefined; name = names.pop())
          await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      }),
    ),
  );
  if (redisUrl) {
    const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    try {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${runId}*`, 'COUNT', 1000);
        if (keys.length > 0) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
  }
  releaseS3Server(runId);
  const embedded = (globalThis as { __embeddedPostgres?: { stop(): Promise<void> } }).__embeddedPostgres;
  if (embedded) await embedded.stop();
}
