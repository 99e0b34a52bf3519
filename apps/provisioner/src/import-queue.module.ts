import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { DynamicModule, Global, Module, Provider } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { RedisOptions } from 'ioredis';
import { StorageRegistrationModule } from './storage-registration/storage-registration.module';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from './config/provisioner.settings';
import { CopyThreadPool } from './import-pipeline/copy-thread-pool';
import type { QueueBackendConfig } from './queue/queue-backend';
import { QueueErrorLogger } from './imports/queue-error-logger.service';
import { QUEUE_BACKEND } from './queue/queue.module';
import { ImportRecordsRepository } from './imports/import-records.repository';
import { ImportSchedulerService } from './import-pipeline/import-scheduler.service';
import { ImportSyncService } from './import-pipeline/import-sync.service';
import { configureImportProcessor, ImportProcessor } from './import-pipeline/import.processor';
import { ImportProducer } from './imports/import.producer';
import { IMPORTS_QUEUE } from './imports/import.queue';
import { PostgresImportRecords } from './imports/postgres-import-records.repository';
import { RedisImportRecords } from './imports/redis-import-records.repository';

/** The import records' store lives beside the queue's own keys or tables, on its backend. */
const importRecords: Provider = {
  provide: ImportRecordsRepository,
  inject: [getQueueToken(IMPORTS_QUEUE), QUEUE_BACKEND],
  useFactory: (queue: Queue, backend: QueueBackendConfig): ImportRecordsRepository =>
    backend.kind === 'redis'
      ? new RedisImportRecords(queue, backend.connection as RedisOptions)
      : new PostgresImportRecords(
          queue,
          backend.connection as { connectionString: string; schema: string },
        ),
};

/** The worker's copy threads, sized by IMPORT_COPY_THREADS; closed with the app. */
const copyPool: Provider = {
  provide: CopyThreadPool,
  inject: [PROVISIONER_SETTINGS],
  useFactory: (settings: ProvisionerSettings) =>
    new CopyThreadPool(settings.IMPORT_COPY_THREADS),
};

const producerSide = {
  imports: [BullModule.registerQueue({ name: IMPORTS_QUEUE })],
  providers: [importRecords, ImportProducer, QueueErrorLogger],
  exports: [BullModule, ImportRecordsRepository, ImportProducer],
};

/**
 * The imports queue: its registration, its records, its producer and (in the worker) its
 * processor. Global, as the routes, health check, metrics and dashboard of a process all use
 * the one queue. A process imports exactly one of the two variants.
 */
@Global()
@Module({})
export class ImportQueueModule {
  /** The API process: adds jobs, reads them; never runs one. */
  static forApi(): DynamicModule {
    return { module: ImportQueueModule, ...producerSide };
  }

  /**
   * The worker process: runs the jobs (and queues the imports its scheduled sync finds, and the
   * catalog registrations of what it published).
   */
  static forWorker(settings: ProvisionerSettings): DynamicModule {
    configureImportProcessor(settings);
    return {
      module: ImportQueueModule,
      ...producerSide,
      // A published import hands its registration to the catalog's outbox queue.
      imports: [...producerSide.imports, StorageRegistrationModule.forWorker(settings)],
      providers: [
        ...producerSide.providers,
        ImportProcessor,
        copyPool,
        ImportSyncService,
        ImportSchedulerService,
      ],
    };
  }
}
