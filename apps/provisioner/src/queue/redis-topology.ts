import Redis, { Cluster, type RedisOptions } from 'ioredis';
import type { ProvisionerSettings } from '../config/provisioner.settings';
import { type HostPort, parseHostPortList } from '../config/redis-settings';

/** How the queue's Redis is reached: one server (REDIS_URL), a Sentinel set, or a Cluster. */
export type RedisTopology =
  | { mode: 'server'; options: RedisOptions }
  | { mode: 'sentinel'; options: RedisOptions }
  | { mode: 'cluster'; nodes: HostPort[]; options: RedisOptions };

/**
 * Which process holds the connection. A worker waits out an outage: its commands stay queued
 * and are never cut off by a retry limit (BullMQ's blocking commands require that). The API
 * answers people: while Redis is unreachable its commands fail at once (503, retry later)
 * instead of holding requests open until Redis returns.
 */
export type RedisRole = 'worker' | 'api';

const ROLE_OPTIONS: Record<RedisRole, RedisOptions> = {
  worker: { maxRetriesPerRequest: null, enableOfflineQueue: true },
  api: { maxRetriesPerRequest: 1, enableOfflineQueue: false },
};

/**
 * After a failover, a connection still open to the demoted primary is refused every write with
 * READONLY: reconnect (through the Sentinels, which name the new primary) and resend the command.
 */
export function reconnectOnReadOnly(error: Error): 2 | false {
  return error.message.startsWith('READONLY') ? 2 : false;
}

/** What every connection of the provisioner to Redis shares, whatever the topology. */
const COMMON: RedisOptions = {
  connectTimeout: 5000,
  // A peer that vanished without closing the socket is noticed by TCP keep-alive.
  keepAlive: 10_000,
  reconnectOnError: reconnectOnReadOnly,
};

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
  };
}

/** The topology the settings name, or null when the queue runs on PostgreSQL. */
export function redisTopology(settings: ProvisionerSettings): RedisTopology | null {
  if (settings.REDIS_URL)
    return { mode: 'server', options: { ...COMMON, ...redisOptionsFromUrl(settings.REDIS_URL) } };
  if (settings.REDIS_SENTINELS)
    return {
      mode: 'sentinel',
      options: {
        ...COMMON,
        sentinels: parseHostPortList(settings.REDIS_SENTINELS)!,
        name: settings.REDIS_SENTINEL_NAME,
        role: 'master',
        sentinelPassword: settings.REDIS_SENTINEL_PASSWORD,
        password: settings.REDIS_PASSWORD,
        // Not ioredis's failoverDetector: a client closed with QUIT (as BullMQ closes its own)
        // leaves the detector's Sentinel connections open. After a failover the demoted
        // primary refuses writes (READONLY: reconnect, above) and unblocks blocking reads,
        // and every reconnect asks the Sentinels for the primary anew.
      },
    };
  if (settings.REDIS_CLUSTER_NODES)
    return {
      mode: 'cluster',
      nodes: parseHostPortList(settings.REDIS_CLUSTER_NODES)!,
      options: { ...COMMON, password: settings.REDIS_PASSWORD },
    };
  return null;
}

/**
 * The queue's key prefix: on a Cluster a hash tag (`{provisioner}`), so that every key of a
 * queue lands in one slot, as BullMQ's multi-key scripts require.
 */
export function redisKeyPrefix(topology: RedisTopology, queuePrefix: string): string {
  return topology.mode === 'cluster' ? `{${queuePrefix}}` : queuePrefix;
}

/** Options of one connection for `role` (what BullMQ is given for a server or Sentinel set). */
export function redisOptionsFor(
  topology: RedisTopology,
  role: RedisRole,
  overrides: RedisOptions = {},
): RedisOptions {
  return { ...topology.options, ...ROLE_OPTIONS[role], ...overrides };
}

/** A client of the queue's Redis for `role`: a Cluster client on a Cluster, else a Redis one. */
export function connectRedis(
  topology: RedisTopology,
  role: RedisRole,
  overrides: RedisOptions = {},
): Redis | Cluster {
  const options = redisOptionsFor(topology, role, overrides);
  if (topology.mode !== 'cluster') return new Redis(options);
  const { enableOfflineQueue, ...nodeOptions } = options;
  return new Cluster(topology.nodes, { enableOfflineQueue, redisOptions: nodeOptions });
}

/**
 * The Sentinels' `down-after-milliseconds` for the primary (how long it may be silent before a
 * failover starts), from the first Sentinel that answers; null without Sentinels or an answer.
 */
export async function sentinelDownAfterMs(topology: RedisTopology): Promise<number | null> {
  if (topology.mode !== 'sentinel') return null;
  for (const sentinel of topology.options.sentinels ?? []) {
    const client = new Redis({
      host: sentinel.host,
      port: sentinel.port,
      password: topology.options.sentinelPassword,
      lazyConnect: true,
      connectTimeout: 2000,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const fields = (await client.call('SENTINEL', 'MASTER', topology.options.name!)) as string[];
      const at = fields.indexOf('down-after-milliseconds');
      if (at >= 0) return Number(fields[at + 1]);
    } catch {
      // The next Sentinel may answer.
    } finally {
      client.disconnect();
    }
  }
  return null;
}
