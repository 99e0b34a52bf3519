import { createPostgresBackend, setDefaultBackendFactory } from 'bullmq';
import type { ProvisionerSettings } from '../config/provisioner.settings';
import {
  redisKeyPrefix,
  type RedisRole,
  redisTopology,
  type RedisTopology,
} from './redis-topology';

export type QueueBackendKind = 'redis' | 'postgres';

export interface PostgresQueueConnection {
  connectionString: string;
  schema: string;
  migrate: boolean;
}

export type QueueBackendConfig =
  | {
      kind: 'redis';
      redis: RedisTopology;
      /** The process the connections are for (a worker waits out outages; the API fails fast). */
      role: RedisRole;
      /** The keys' prefix: QUEUE_PREFIX, as a `{hash tag}` on a Cluster. */
      prefix: string;
    }
  | { kind: 'postgres'; connection: PostgresQueueConnection; prefix: string };

/**
 * Redis when REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES is set (never PostgreSQL then);
 * otherwise BullMQ's PostgreSQL backend, so a machine with only Postgres (or the embedded
 * default) still runs the queue. The Postgres backend is selected process-wide, which is why
 * this runs before any queue or worker is created.
 */
export function configureQueueBackend(
  settings: ProvisionerSettings,
  role: RedisRole,
): QueueBackendConfig {
  const redis = redisTopology(settings);
  if (redis) {
    setDefaultBackendFactory();
    return { kind: 'redis', redis, role, prefix: redisKeyPrefix(redis, settings.QUEUE_PREFIX) };
  }
  if (!settings.DATABASE_URL)
    throw new Error(
      'either REDIS_URL, REDIS_SENTINELS, REDIS_CLUSTER_NODES or DATABASE_URL must be set',
    );
  setDefaultBackendFactory(createPostgresBackend);
  return {
    kind: 'postgres',
    connection: {
      // The backend needs a session (LISTEN): the database itself when DATABASE_URL is a pooler.
      connectionString: settings.DATABASE_DIRECT_URL ?? settings.DATABASE_URL,
      schema: `bullmq_${settings.QUEUE_PREFIX}`,
      migrate: true,
    },
    prefix: settings.QUEUE_PREFIX,
  };
}
