import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { QueueEvents } from 'bullmq';
import { IMPORTS_QUEUE } from '../src/imports/import.queue';
import { ImportProducer } from '../src/imports/import.producer';
import { ImportProcessor } from '../src/import-pipeline/import.processor';
import { QueueBackendChoice, queueEnv, startProvisionerApps } from '../../../test/support/provisioner-app';
import { testServices } from '../../../test/support/test-services';

const backends: QueueBackendChoice[] = testServices().redisUrl ? ['redis', 'postgres'] : ['postgres'];

describe.each(backends)('queue round trip on the %s backend', (backend) => {
  it('a job enqueued by the API process is completed by the worker process', async () => {
    const apps = await startProvisionerApps(await queueEnv(backend));
    const queue = apps.api.get<Queue>(getQueueToken(IMPORTS_QUEUE));
    const events = new QueueEvents(IMPORTS_QUEUE, {
      connection: queue.opts.connection,
      prefix: queue.opts.prefix,
    });
    try {
      await events.waitUntilReady();
      const job = await apps.api.get(ImportProducer).ping('round-trip');
      const result = (await job.waitUntilFinished(events, 20_000)) as { pong: boolean };
      expect(result.pong).toBe(true);
      expect(await queue.getJobState(job.id!)).toBe('completed');
      // Connection errors (a restarting Redis or Postgres) are logged, not left unhandled.
      expect(queue.listenerCount('error')).toBeGreaterThan(0);
      const worker = apps.worker.get(ImportProcessor).worker;
      expect(worker.listenerCount('error')).toBeGreaterThan(0);
    } finally {
      await events.close();
      await apps.close();
    }
  });
});
