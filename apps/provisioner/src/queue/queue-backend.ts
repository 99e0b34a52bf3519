import { createPostgresBackend, setDefaultBackendFactory } from 'bullmq';
import type { RedisOptions } from 'ioredis';
import type { ProvisionerSettings } from '../config/provisioner.settings';

export type QueueBackendKind = 'redis' | 'postgres';

export interface QueueBackendConfig {
  kind: QueueBackendKind;
  /** Passed to BullMQ as `connection`; its shape depends on the backend. */
  connection: RedisOptions | { connectionString: string; schema: string; migrate: boolean };
  prefix: string;
}

/** ioredis options from a redis:// or rediss:// URL (user, password, database, TLS). */
export function redisOptionsFromUrl(url: string): RedisOptions {
  const parsed = new URL(url);
  const db = parsed.pathname.replace(/^\//, '');
  return {
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : 6379,
    username: parsed.username ? decodeURIComponent(parsed.username) : undefined,
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    db: db ? Number(db) : 0,
    tls: parsed.protocol === 'rediss:' ? {} : undefined,
    // BullMQ's blocking commands must not be cut off by ioredis's per-request retry limit.
    maxRetriesPerRequest: null,
    connectTimeout: 5000,
  };
}

/**
 * Redis when REDIS_URL is set; otherwise BullMQ's PostgreSQL backend, so a machine with only
 * Postgres (or the embedded default) still runs the queue. The Postgres backend is selected
 * process-wide, which is why this runs before any queue or worker is created.
 */
export function configureQueueBackend(settings: ProvisionerSettings): QueueBackendConfig {
  if (settings.REDIS_URL) {
    setDefaultBackendFactory();
    return {
      kind: 'redis',
      connection: redisOptionsFromUrl(settings.REDIS_URL),
      prefix: settings.QUEUE_PREFIX,
    };
  }
  if (!settings.DATABASE_URL) throw new Error('either REDIS_URL or DATABASE_URL must be set');
  setDefaultBackendFactory(createPostgresBackend);
  return {
    kind: 'postgres',
    connection: {
      connectionString: settings.DATABASE_URL,
      schema: `bullmq_${settings.QUEUE_PREFIX}`,
      migrate: true,
    },
    prefix: settings.QUEUE_PREFIX,
  };
}
