import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Global, Module } from '@nestjs/common';
import type { ConnectionOptions } from 'bullmq';
import { IMPORTS_QUEUE } from '../imports/imports.queue';
import { QueueBackendConfig } from './queue-backend';
import { QueueErrorLogger } from './queue-error.logger';

export const QUEUE_BACKEND = Symbol('QUEUE_BACKEND');

/** The BullMQ connection and the provisioner's queues, shared by the API and the worker. */
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
        BullModule.registerQueue({ name: IMPORTS_QUEUE }),
      ],
      providers: [{ provide: QUEUE_BACKEND, useValue: backend }, QueueErrorLogger],
      exports: [BullModule, QUEUE_BACKEND],
    };
  }
}
