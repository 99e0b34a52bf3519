import { getQueueToken } from '@nestjs/bullmq';
import { HEALTH_CHECKS, HealthCheck, HealthModule } from '@app/platform';
import type { Queue } from 'bullmq';
import { IMPORTS_QUEUE } from './imports/import.queue';
import { STORAGE_HEALTH_CHECKS } from './storage/storage.module';

/** Ready when the queue backend (Redis or Postgres) answers, and the S3 bucket when storage is one. */
export const ProvisionerHealthModule = HealthModule.forRoot({
  provide: HEALTH_CHECKS,
  inject: [getQueueToken(IMPORTS_QUEUE), STORAGE_HEALTH_CHECKS],
  useFactory: (queue: Queue, storageChecks: HealthCheck[]): HealthCheck[] => [
    { name: 'queue', check: async () => void (await queue.getJobCounts('waiting')) },
    ...storageChecks,
  ],
});
