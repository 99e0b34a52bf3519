import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { DynamicModule, Global, Module, Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import type { Queue } from 'bullmq';
import { StorageRegistrationModule } from './storage-registration/storage-registration.module';
import { TrailModule } from './trail/trail.module';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from './config/provisioner.settings';
import {
  COPY_THREAD_ENTRY,
  CopyThreadPool,
  FileBudget,
  RETIRE_IDLE_S3_THREADS,
} from './import-pipeline/copying';
import type { QueueBackendConfig } from './queue/queue-backend';
import { QueueErrorLogger } from './imports/queue-error-logger.service';
import { QUEUE_BACKEND } from './queue/queue.module';
import { connectRedis } from './queue/redis-topology';
import { WorkerWatchService } from './queue/worker-watch.service';
import { ImportRecordsRepository } from './imports/import-records.repository';
import { ImportSchedulerService } from './import-pipeline/import-scheduler.service';
import { ImportSyncService } from './import-pipeline/import-sync.service';
import { configureImportProcessor, ImportProcessor } from './import-pipeline/import.processor';
import { StartupReconciliationService } from './import-pipeline/startup-reconciliation.service';
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
      ? new RedisImportRecords(
          queue,
          connectRedis(backend.redis, backend.role, { connectionName: 'import-records' }),
        )
      : new PostgresImportRecords(queue, backend.connection),
};

/**
 * The worker's copy threads, sized by IMPORT_COPY_THREADS (`copyThreads`), ended once idle on S3
 * (RETIRE_IDLE_S3_THREADS); closed with the app.
 */
const copyPool: Provider = {
  provide: CopyThreadPool,
  inject: [PROVISIONER_SETTINGS],
  useFactory: (settings: ProvisionerSettings) =>
    settings.STORAGE_BACKEND === 's3'
      ? new CopyThreadPool(settings.copyThreads, COPY_THREAD_ENTRY, RETIRE_IDLE_S3_THREADS)
      : new CopyThreadPool(settings.copyThreads),
};

/** The worker's budget of files held by its running imports (IMPORT_MAX_FILES). */
const fileBudget: Provider = {
  provide: FileBudget,
  inject: [PROVISIONER_SETTINGS],
  useFactory: (settings: ProvisionerSettings) => new FileBudget(settings.IMPORT_MAX_FILES),
};

const producerSide = {
  imports: [BullModule.registerQueue({ name: IMPORTS_QUEUE }), DiscoveryModule],
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
      // A published import hands its registration and its trail event to the catalog's outboxes.
      imports: [
        ...producerSide.imports,
        StorageRegistrationModule.forWorker(settings),
        TrailModule.forWorker(settings),
      ],
      providers: [
        ...producerSide.providers,
        ImportProcessor,
        copyPool,
        fileBudget,
        ImportSyncService,
        ImportSchedulerService,
        WorkerWatchService,
        StartupReconciliationService,
      ],
      exports: [...producerSide.exports, WorkerWatchService],
    };
  }
}
