import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { DynamicModule, Global, Module } from '@nestjs/common';
import type { ConnectionOptions, Queue } from 'bullmq';
import type { RedisOptions } from 'ioredis';
import { ImportRecordsRepository } from '../imports/import-records.repository';
import { IMPORTS_QUEUE } from '../imports/imports.queue';
import { PostgresImportRecords } from '../imports/postgres-import-records.repository';
import { RedisImportRecords } from '../imports/redis-import-records.repository';
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
      providers: [
        { provide: QUEUE_BACKEND, useValue: backend },
        QueueErrorLogger,
        {
          provide: ImportRecordsRepository,
          inject: [getQueueToken(IMPORTS_QUEUE)],
          useFactory: (queue: Queue): ImportRecordsRepository =>
            backend.kind === 'redis'
              ? new RedisImportRecords(queue, backend.connection as RedisOptions)
              : new PostgresImportRecords(
                  queue,
                  backend.connection as { connectionString: string; schema: string },
                ),
        },
      ],
      exports: [BullModule, QUEUE_BACKEND, ImportRecordsRepository],
    };
  }
}
