import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPrivatePgBouncer, type PrivatePgBouncer } from '../../scripts/lib/private-pgbouncer';
import {
  newRunId,
  poolerRequested,
  postgresAnswers,
  publishTestServices,
  redisAnswers,
  serverUrlOf,
} from './test-services';

const LOCAL_POSTGRES = 'postgres://postgres@127.0.0.1:5432';
const LOCAL_REDIS = 'redis://127.0.0.1:6379';

type EmbeddedHandle = Awaited<ReturnType<typeof import('../../scripts/lib/embedded-postgres.mjs').startEmbeddedPostgres>>;

/**
 * Finds the services the tests need, in order: the configured URLs, the local services on
 * 127.0.0.1, else an embedded PostgreSQL (and the Postgres queue backend instead of Redis).
 * TEST_PGBOUNCER=on adds a PgBouncer of the run's own in front of that PostgreSQL (=catalog: for
 * the catalog's end-to-end files only; test-services.ts).
 */
export default async function globalSetup(): Promise<void> {
  const runId = newRunId();
  let postgresServerUrl = process.env.DATABASE_URL ? serverUrlOf(process.env.DATABASE_URL) : LOCAL_POSTGRES;
  if (!(await postgresAnswers(postgresServerUrl))) {
    if (process.env.DATABASE_URL) throw new Error(`DATABASE_URL does not answer: ${postgresServerUrl}`);
    const { startEmbeddedPostgres } = await import('../../scripts/lib/embedded-postgres.mjs');
    const embedded = await startEmbeddedPostgres({
      dataDir: mkdtempSync(join(tmpdir(), `${runId}-pg-`)),
      persistent: false,
    });
    (globalThis as { __embeddedPostgres?: EmbeddedHandle }).__embeddedPostgres = embedded;
    postgresServerUrl = embedded.url;
  }

  let redisUrl = process.env.REDIS_URL ?? LOCAL_REDIS;
  if (!(await redisAnswers(redisUrl))) {
    if (process.env.REDIS_URL) throw new Error(`REDIS_URL does not answer: ${redisUrl}`);
    redisUrl = '';
  }

  let poolerServerUrl = '';
  const poolerScope = poolerRequested();
  if (poolerScope !== undefined) {
    const pooler = await startPrivatePgBouncer({
      postgresServerUrl,
    });
    (globalThis as { __pgBouncer?: PrivatePgBouncer }).__pgBouncer = pooler;
    poolerServerUrl = pooler.serverUrl;
  }

  publishTestServices({
    postgresServerUrl,
    poolerServerUrl,
    poolerScope,
    redisUrl,
    runId,
    pid: process.pid,
  });
  process.stdout.write(
    `\ntest services: postgres ${postgresServerUrl.replace(/:[^:@/]+@/, ':***@')}` +
      `${poolerServerUrl ? ` behind pgbouncer ${poolerServerUrl}${poolerScope === 'catalog' ? ' (the catalog e2e files)' : ''}` : ''}, ` +
      `queue ${redisUrl ? 'redis ' + redisUrl : 'postgres backend'}, run ${runId}\n`,
  );
}
