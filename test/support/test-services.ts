import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { withClient } from '../../scripts/lib/pg-client';
import Redis from 'ioredis';

/** What the global setup found; read back by every test worker through the environment. */
export interface TestServices {
  /** URL of the Postgres server (no database name: helpers append one). */
  postgresServerUrl: string;
  /** Redis URL, or '' when none is reachable (the queue then runs on Postgres). */
  redisUrl: string;
  /** Prefix of every database, queue and key this run creates; removed at the end. */
  runId: string;
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

export async function postgresAnswers(serverUrl: string): Promise<boolean> {
  const client = new Client({ connectionString: databaseUrl(serverUrl, 'postgres'), connectionTimeoutMillis: 1500 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
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
