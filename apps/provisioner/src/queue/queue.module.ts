import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Global, Module, OnApplicationShutdown } from '@nestjs/common';
import type { ConnectionOptions } from 'bullmq';
import type { Cluster } from 'ioredis';
import { QueueBackendConfig } from './queue-backend';
import { queueTelemetry } from './queue-telemetry';
import { connectRedis, redisOptionsFor } from './redis-topology';

export const QUEUE_BACKEND = Symbol('QUEUE_BACKEND');

/**
 * What BullMQ is given as `connection`: options for one server or a Sentinel set (each queue
 * and worker then opens its own connections), a Cluster client (BullMQ cannot build one from
 * options; workers duplicate it for their blocking reads), or the PostgreSQL backend's shape.
 */
export function queueConnection(backend: QueueBackendConfig): ConnectionOptions {
  if (backend.kind === 'postgres') return backend.connection as unknown as ConnectionOptions;
  if (backend.redis.mode === 'cluster')
    return connectRedis(backend.redis, backend.role, { connectionName: 'queues' }) as Cluster;
  // ioredis's own options type, which BullMQ's mirrors loosely.
  return redisOptionsFor(backend.redis, backend.role) as ConnectionOptions;
}

/** Closes the Cluster client the queues share (BullMQ leaves a client it was given open). */
class SharedClusterClient implements OnApplicationShutdown {
  constructor(private readonly client: Cluster | null) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client?.quit().catch(() => this.client?.disconnect());
  }
}

/**
 * The BullMQ connection (Redis, a Sentinel set, a Cluster, or the PostgreSQL backend), shared by
 * the API and the worker: the one place queues get their connection. Each queue registers
 * itself in its own module (`import-queue.module.ts`, `storage-registration/`).
 */
@Global()
@Module({})
export class QueueModule {
  static forRoot(backend: QueueBackendConfig): DynamicModule {
    const connection = queueConnection(backend);
    const shared = backend.kind === 'redis' && backend.redis.mode === 'cluster';
    return {
      module: QueueModule,
      imports: [
        BullModule.forRoot({
          connection,
          prefix: backend.prefix,
          // Every queue and worker of the process: their jobs carry the trace on (BullMQ's hooks).
          telemetry: queueTelemetry(),
        }),
      ],
      providers: [
        { provide: QUEUE_BACKEND, useValue: backend },
        {
          provide: SharedClusterClient,
          useValue: new SharedClusterClient(shared ? (connection as Cluster) : null),
        },
      ],
      exports: [QUEUE_BACKEND],
    };
  }
}
