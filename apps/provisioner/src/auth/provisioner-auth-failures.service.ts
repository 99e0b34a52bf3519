import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Pool } from 'pg';
import { AuthFailureStore, FailureCount, FailurePolicy, RedisAuthFailuresStore } from '@app/auth';
import { QUEUE_BACKEND } from '../queue/queue.module';
import type { QueueBackendConfig } from '../queue/queue-backend';
import { connectRedis } from '../queue/redis-topology';
import { ProvisionerAuthFailuresRepository } from './provisioner-auth-failures.repository';

/** A store that cannot answer within this is skipped: the caller gets its 401 uncounted. */
const STORE_TIMEOUT_MS = 2000;

/**
 * Failed authentications of the provisioner API, shared by its replicas on the queue's own
 * backend: Redis keys `<QUEUE_PREFIX>:auth:*` when the queue runs on Redis, else the table
 * `<QUEUE_PREFIX>_auth.auth_failures` in the queue's PostgreSQL (created on first use). The
 * store has its own connection with short time-outs, so a backend outage never holds a request
 * longer than STORE_TIMEOUT_MS.
 */
@Injectable()
export class ProvisionerAuthFailuresStore implements AuthFailureStore, OnApplicationShutdown {
  private readonly logger = new Logger(ProvisionerAuthFailuresStore.name);
  private readonly store: AuthFailureStore;
  private readonly close: () => Promise<void>;

  constructor(@Inject(QUEUE_BACKEND) backend: QueueBackendConfig) {
    if (backend.kind === 'redis') {
      // Commands wait for the connection (a replica's first requests come while it is still
      // being made), each at most STORE_TIMEOUT_MS, an outage included.
      const redis = connectRedis(backend.redis, 'api', {
        commandTimeout: STORE_TIMEOUT_MS,
        enableOfflineQueue: true,
      });
      redis.on('error', (error) => this.logger.debug({ err: error }, 'redis connection error'));
      this.store = new RedisAuthFailuresStore(redis, backend.prefix);
      this.close = () => {
        redis.disconnect();
        return Promise.resolve();
      };
      return;
    }
    const { connectionString } = backend.connection;
    const pool = new Pool({
      connectionString,
      max: 2,
      connectionTimeoutMillis: STORE_TIMEOUT_MS,
      statement_timeout: STORE_TIMEOUT_MS,
    });
    pool.on('error', (error) => this.logger.debug({ err: error }, 'postgres connection error'));
    this.store = new ProvisionerAuthFailuresRepository(pool, backend.prefix);
    this.close = () => pool.end();
  }

  recordFailure(client: string, policy: FailurePolicy): Promise<FailureCount> {
    return this.store.recordFailure(client, policy);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }
}
