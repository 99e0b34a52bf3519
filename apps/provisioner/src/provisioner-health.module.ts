import { getQueueToken } from '@nestjs/bullmq';
import { HEALTH_CHECKS, HealthCheck, HealthModule } from '@app/platform';
import type { Queue } from 'bullmq';
import { IMPORTS_QUEUE } from './imports/import.queue';
import { STORAGE_SYSTEM } from './storage/storage.module';
import type { StorageSystem } from './storage/storage-system';

/** Ready when the queue backend (Redis or Postgres) answers, and the S3 bucket when storage is one. */
export const ProvisionerHealthModule = HealthModule.forRoot({
  provide: HEALTH_CHECKS,
  inject: [getQueueToken(IMPORTS_QUEUE), STORAGE_SYSTEM],
  useFactory: (queue: Queue, storage: StorageSystem) => {
    const checks: HealthCheck[] = [
      { name: 'queue', check: async () => void (await queue.getJobCounts('waiting')) },
    ];
    const checkReady = storage.checkReady?.bind(storage);
    if (checkReady) checks.push({ name: 'storage', check: checkReady });
    return checks;
  },
});
