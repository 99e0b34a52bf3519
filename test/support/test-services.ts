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

/** TEST_PGBOUNCER=on: the run puts PgBouncer (transaction mode) in front of its databases. */
export function poolerRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  return /^(on|true|1)$/i.test(env.TEST_PGBOUNCER ?? '');
}

/**
 * A service's database settings for the database at `directUrl`: the URL itself, or behind the
 * run's PgBouncer the pooler's URL of that database plus the direct one for session work.
 */
export function databaseEnv(directUrl: string): Record<string, string> {
  const { poolerServerUrl } = testServices();
  if (!poolerServerUrl) return { DATABASE_URL: directUrl };
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
