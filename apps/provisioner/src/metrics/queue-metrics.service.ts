import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { JobType, Queue } from 'bullmq';
import { Gauge, Registry } from 'prom-client';
import { METRICS_REGISTRY } from '@app/platform';
import { IMPORTS_QUEUE } from '../imports/import.queue';
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

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Queue depth by state, read from the queue backend at scrape time. Every provisioner pod
 * reports the same numbers: aggregate with max(), not sum().
 */
type JobCounts = Record<string, number>;

/**
 * Queue depth by state, read from the queue backend at scrape time. Every provisioner pod
 * reports the same numbers: aggregate with max(), not sum().
 */
@Injectable()
export class QueueMetricsCollector {
  private readonly logger = new Logger(QueueMetricsCollector.name);
  /** One backend read per scrape, shared by both gauges (prom-client collects them in parallel). */
  private inFlight?: Promise<JobCounts | null>;

  constructor(
    @Inject(METRICS_REGISTRY) registry: Registry,
    @InjectQueue(IMPORTS_QUEUE) private readonly queue: Queue,
  ) {
    const counts = () => this.counts();
    const name = queue.name;
    new Gauge({
      name: 'provisioner_queue_up',
      help: '1 when the queue backend answered the last scrape, else 0',
      labelNames: ['queue'],
      registers: [registry],
      async collect() {
        this.set({ queue: name }, (await counts()) === null ? 0 : 1);
      },
    });
    new Gauge({
      name: 'provisioner_queue_jobs',
      help: 'Jobs in the queue, by state',
      labelNames: ['queue', 'state'],
      registers: [registry],
      async collect() {
        this.reset();
        const current = await counts();
        if (current === null) return;
        for (const state of STATES) this.set({ queue: name, state }, current[state] ?? 0);
      },
    });
  }

  private counts(): Promise<JobCounts | null> {
    // eslint-disable-next-line no-restricted-syntax -- STATES is a constant list of six
    this.inFlight ??= withTimeout(this.queue.getJobCounts(...STATES), COUNT_TIMEOUT_MS)
      .catch((error: unknown) => {
        this.logger.warn(`queue depth unavailable: ${logSafeMessage(error)}`);
        return null;
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }
}
