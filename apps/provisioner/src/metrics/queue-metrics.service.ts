import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { JobType, Queue } from 'bullmq';
import { Gauge, Registry } from 'prom-client';
import { answeredWithin, METRICS_REGISTRY } from '@app/platform';
import { IMPORTS_QUEUE } from '../imports/import.queue';
import { STORAGE_REGISTRATION_QUEUE } from '../storage-registration/storage-registration.queue';
import { TRAIL_QUEUE } from '../trail/trail.queue';
import { logSafeMessage } from '@app/errors';

const STATES: JobType[] = [
  'waiting',
  'active',
  'delayed',
  'prioritized',
  'waiting-children',

  'failed',
  'completed',
];
/** A scrape must not hang on a queue backend that does not answer (ioredis queues commands while disconnected). */
const COUNT_TIMEOUT_MS = 2000;

type JobCounts = Record<string, number>;

/**
 * Depth by state of the imports queue, of the catalog-registration queue (a registration
 * backlog: the catalog down or refusing) and of the catalog-trail queue (trail events not yet
 * delivered: the trail's lag), read from the queue backend at scrape time. Every
 * provisioner pod reports the same numbers: aggregate with max(), not sum().
 */
@Injectable()
export class QueueMetricsCollector {
  private readonly logger = new Logger(QueueMetricsCollector.name);
  /** One backend read per queue and scrape, shared by both gauges (prom-client collects them in parallel). */
  private readonly inFlight = new Map<Queue, Promise<JobCounts | null>>();

  constructor(
    @Inject(METRICS_REGISTRY) registry: Registry,
    @InjectQueue(IMPORTS_QUEUE) imports: Queue,
    @InjectQueue(STORAGE_REGISTRATION_QUEUE) registrations: Queue,
    @InjectQueue(TRAIL_QUEUE) trail: Queue,
  ) {
    const queues = [imports, registrations, trail];
    const counts = (queue: Queue) => this.counts(queue);
    new Gauge({
      name: 'provisioner_queue_up',
      help: '1 when the queue backend answered the last scrape, else 0',
      labelNames: ['queue'],
      registers: [registry],
      async collect() {
        for (const queue of queues)
          this.set({ queue: queue.name }, (await counts(queue)) === null ? 0 : 1);
      },
    });
    new Gauge({
      name: 'provisioner_queue_jobs',
      help: 'Jobs in the queue, by state',
      labelNames: ['queue', 'state'],
      registers: [registry],
      async collect() {
        this.reset();
        for (const queue of queues) {
          const current = await counts(queue);
          if (current === null) continue;
          for (const state of STATES) this.set({ queue: queue.name, state }, current[state] ?? 0);
        }
      },
    });
  }

  private counts(queue: Queue): Promise<JobCounts | null> {
    let counting = this.inFlight.get(queue);
    if (counting === undefined) {
      // eslint-disable-next-line no-restricted-syntax -- STATES is a constant list of six
      counting = answeredWithin(queue.getJobCounts(...STATES), COUNT_TIMEOUT_MS)
        .catch((error: unknown) => {
          this.logger.warn(`queue depth of ${queue.name} unavailable: ${logSafeMessage(error)}`);
          return null;
        })
        .finally(() => this.inFlight.delete(queue));
      this.inFlight.set(queue, counting);
    }
    return counting;
  }
}
