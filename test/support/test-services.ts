import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { postgresAnswersAt, withClient } from '../../scripts/lib/pg-client';
import Redis from 'ioredis';

/** What the global setup found; read back by every test worker through the environment. */
export interface TestServices {
  /** URL of the Postgres server (no database name: helpers append one). */
  postgresServerUrl: string;
  /**
   * A PgBouncer in transaction mode in front of that server (same form), or '' unless the run
   * asked for one with TEST_PGBOUNCER=on: then the catalog apps of the tests reach their
   * databases through it (DATABASE_URL) and the database itself only for what needs a session
   * (DATABASE_DIRECT_URL), as in a deployment behind PgBouncer.
   */
  poolerServerUrl: string;
  /**
   * Which test files reach their databases through that PgBouncer: every one (TEST_PGBOUNCER=on)
   * or only the catalog's own end-to-end files, apps/catalog-api/test (TEST_PGBOUNCER=catalog:
   * the catalog's whole suite behind the pooler inside the main run, the rest direct).
   */
  poolerScope?: PoolerScope;
  /** Redis URL, or '' when none is reachable (the queue then runs on Postgres). */
  redisUrl: string;
  /** Prefix of every database, queue and key this run creates; removed at the end. */
  runId: string;
  /** The run's main (jest) process: shared servers count the run as a user while it lives. */
  pid: number;
}

const ENV_KEY = 'TEST_SERVICES';

export function newRunId(): string {
  return `t${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

export function publishTestServices(services: TestServices): void {
  process.env[ENV_KEY] = JSON.stringify(services);
}

export function testServices(): TestServices {
  const raw = process.env[ENV_KEY];
  if (!raw) throw new Error('test services not set up: run the tests through jest (npm test)');
  return JSON.parse(raw) as TestServices;
}

/** The server part of a Postgres URL: the same URL with the database path removed. */
export function serverUrlOf(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.pathname = '';
  return url.toString().replace(/\/$/, '');
}

export function databaseUrl(serverUrl: string, database: string): string {
  return `${serverUrl}/${database}`;
}

export type PoolerScope = 'all' | 'catalog';

/**
 * TEST_PGBOUNCER=on: the run puts PgBouncer (transaction mode) in front of every database of its
 * tests; TEST_PGBOUNCER=catalog: in front of those of the catalog's end-to-end files only
 * (apps/catalog-api/test), so one run holds the catalog's whole suite behind the pooler and the
 * rest direct. Undefined when the run asked for none.
 */
export function poolerRequested(env: NodeJS.ProcessEnv = process.env): PoolerScope | undefined {
  const value = (env.TEST_PGBOUNCER ?? '').trim().toLowerCase();
  if (['on', 'true', '1', 'all'].includes(value)) return 'all';
  if (value === 'catalog') return 'catalog';
  if (['', 'off', 'false', '0'].includes(value)) return undefined;
  throw new Error(`TEST_PGBOUNCER=${env.TEST_PGBOUNCER}: expected on, catalog or off`);
}

/** The catalog's own end-to-end files: what TEST_PGBOUNCER=catalog puts behind the pooler. */
const CATALOG_FILES = /[\\/]apps[\\/]catalog-api[\\/]test[\\/]/;

/** Whether the test file running now reaches its databases through the run's pooler. */
export function behindPooler(
  services: Pick<TestServices, 'poolerServerUrl' | 'poolerScope'>,
  testPath: string | undefined,
): boolean {
  if (!services.poolerServerUrl) return false;
  if ((services.poolerScope ?? 'all') === 'all') return true;
  return testPath !== undefined && CATALOG_FILES.test(testPath);
}

/** The path of the test file running in this process, when jest's `expect` is there to ask. */
function currentTestPath(): string | undefined {
  const expectation = (globalThis as { expect?: { getState(): { testPath?: string } } }).expect;
  return expectation?.getState().testPath ?? undefined;
}

/**
 * A service's database settings for the database at `directUrl`: the URL itself, or behind the
 * run's PgBouncer the pooler's URL of that database plus the direct one for session work.
 */
export function databaseEnv(directUrl: string): Record<string, string> {
  const services = testServices();
  const { poolerServerUrl } = services;
  if (!behindPooler(services, currentTestPath())) return { DATABASE_URL: directUrl };
  const database = new URL(directUrl).pathname.slice(1);
  return {
    DATABASE_URL: databaseUrl(poolerServerUrl, database),
    DATABASE_DIRECT_URL: directUrl,
  };
}

export function postgresAnswers(serverUrl: string): Promise<boolean> {
  return postgresAnswersAt(databaseUrl(serverUrl, 'postgres'));
}

export async function redisAnswers(url: string): Promise<boolean> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1500,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/** Runs SQL against the server's maintenance database. */
export function withAdminClient<T>(serverUrl: string, work: (client: Client) => Promise<T>): Promise<T> {
  return withClient(databaseUrl(serverUrl, 'postgres'), work);
}
