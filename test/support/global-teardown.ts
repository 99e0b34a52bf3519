import Redis from 'ioredis';
import { releaseS3Server } from './s3-server';
import { testServices, withAdminClient } from './test-services';

/**
 * Stops the run's PgBouncer, removes every database and queue key this run created, then stops
 * leaves the S3 server (stopped when this run was its last user) and stops an embedded Postgres.
 */
export default async function globalTeardown(): Promise<void> {
  const { postgresServerUrl, redisUrl, runId } = testServices();
  // First, so no pooled server connection holds a database about to be dropped.
  await (globalThis as { __pgBouncer?: { stop(): Promise<void> } }).__pgBouncer?.stop();
  await withAdminClient(postgresServerUrl, async (client) => {
    const { rows } = await client.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE datname LIKE $1',
      [`${runId}%`],
    );
    for (const { datname } of rows) {
      await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
  });
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
