import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Global, Module } from '@nestjs/common';
import type { ConnectionOptions } from 'bullmq';
import { QueueBackendConfig } from './queue-backend';

export const QUEUE_BACKEND = Symbol('QUEUE_BACKEND');

/**
 * The BullMQ connection (Redis or the PostgreSQL backend), shared by the API and the worker.
 * Each queue registers itself in its own module (`import-queue.module.ts`, `storage-registration/`).
 */
@Global()
@Module({})
export class QueueModule {
  static forRoot(backend: QueueBackendConfig): DynamicModule {
    return {
      module: QueueModule,
      imports: [
        BullModule.forRoot({
          // The Postgres backend takes its own connection shape through the same option.
          connection: backend.connection as ConnectionOptions,
          prefix: backend.prefix,
        }),
      ],
      providers: [{ provide: QUEUE_BACKEND, useValue: backend }],
      exports: [QUEUE_BACKEND],
    };
  }
}
