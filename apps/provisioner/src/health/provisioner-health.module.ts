import { getQueueToken } from '@nestjs/bullmq';
import { HEALTH_CHECKS, HealthModule } from '@app/platform';
import type { Queue } from 'bullmq';
import { IMPORTS_QUEUE } from '../import-queue/import.queue';

/** Ready when the queue backend (Redis or Postgres) answers. */
export const ProvisionerHealthModule = HealthModule.forRoot({
  provide: HEALTH_CHECKS,
  inject: [getQueueToken(IMPORTS_QUEUE)],
  useFactory: (queue: Queue) => [
    { name: 'queue', check: async () => void (await queue.getJobCounts('waiting')) },
  ],
});
