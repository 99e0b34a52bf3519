import { loadProvisionerSettings } from '../config/provisioner.settings';
import {
  reconnectOnReadOnly,
  redisKeyPrefix,
  redisOptionsFor,
  redisTopology,
} from './redis-topology';

const DATABASE_URL = 'postgres://provisioner@db:5432/provisioner';

describe('the Redis topology from the settings', () => {
  it('takes a Sentinel set or a Cluster instead of REDIS_URL, and the queue stays on Redis', () => {
    const sentinel = loadProvisionerSettings({
      REDIS_SENTINELS: 'sentinel-0:26379, sentinel-1:26379,[fd00::2]:26379',
      REDIS_SENTINEL_NAME: 'queue-primary',
      REDIS_PASSWORD: 'a-real-password-1',
      REDIS_SENTINEL_PASSWORD: 'a-real-password-2',
      DATABASE_URL,
    });
    expect(redisTopology(sentinel)).toMatchObject({
      mode: 'sentinel',
      options: {
        sentinels: [
          { host: 'sentinel-0', port: 26379 },
          { host: 'sentinel-1', port: 26379 },
          { host: 'fd00::2', port: 26379 },
        ],
        name: 'queue-primary',
        password: 'a-real-password-1',
        sentinelPassword: 'a-real-password-2',
      },
    });
    const cluster = loadProvisionerSettings({ REDIS_CLUSTER_NODES: 'redis-0:6379,redis-1:6379' });
    expect(redisTopology(cluster)).toMatchObject({
      mode: 'cluster',
      nodes: [
        { host: 'redis-0', port: 6379 },
        { host: 'redis-1', port: 6379 },
      ],
    });
    expect(redisKeyPrefix(redisTopology(cluster)!, cluster.QUEUE_PREFIX)).toBe('{provisioner}');
    expect(redisKeyPrefix(redisTopology(sentinel)!, sentinel.QUEUE_PREFIX)).toBe('provisioner');
    expect(redisTopology(loadProvisionerSettings({ DATABASE_URL }))).toBeNull();
  });

  it('gives the worker connections that wait out outages, and the API ones that fail fast', () => {
    const topology = redisTopology(
      loadProvisionerSettings({ REDIS_URL: 'redis://:pw1-real@redis:6380/2' }),
    )!;
    expect(redisOptionsFor(topology, 'worker')).toMatchObject({
      host: 'redis',
      port: 6380,
      db: 2,
      password: 'pw1-real',
      maxRetriesPerRequest: null,
      enableOfflineQueue: true,
    });
    expect(redisOptionsFor(topology, 'api')).toMatchObject({
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
    });
  });

  it('reconnects and resends when a demoted primary refuses a write, and only then', () => {
    expect(
      reconnectOnReadOnly(new Error("READONLY You can't write against a read only replica.")),
    ).toBe(2);
    expect(reconnectOnReadOnly(new Error('ERR unknown command'))).toBe(false);
  });
});
