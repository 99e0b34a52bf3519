import { getQueueToken } from '@nestjs/bullmq';
import { HEALTH_CHECKS, HealthCheck, HealthModule } from '@app/platform';
import type { Queue } from 'bullmq';
import { IMPORTS_QUEUE } from './imports/import.queue';
import { STORAGE_HEALTH_CHECKS } from './storage/storage.module';
import { WorkerWatchService } from './queue/worker-watch.service';

/**
 * Ready when the queue backend (Redis or Postgres) answers, and the S3 bucket when storage is
 * one; in the worker, also when its queue workers are connected and running.
 */
export const ProvisionerHealthModule = HealthModule.forRoot({
  provide: HEALTH_CHECKS,
  inject: [
    getQueueToken(IMPORTS_QUEUE),
    STORAGE_HEALTH_CHECKS,
    { token: WorkerWatchService, optional: true },
  ],
  useFactory: (
    queue: Queue,
    storageChecks: HealthCheck[],
    workers: WorkerWatchService | undefined,
  ): HealthCheck[] => [
    { name: 'queue', check: async () => void (await queue.getJobCounts('waiting')) },
    ...storageChecks,
    // The worker process: its workers connected to the queue and taking jobs.
    ...(workers ? [workers.healthCheck()] : []),
  ],
});
