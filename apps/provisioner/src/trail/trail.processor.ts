import { InjectQueue, Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { Job, Queue, UnrecoverableError, Worker, WorkerOptions } from 'bullmq';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';
import { assertEveryJobHasHandler, JobHandlers } from '../queue/job-handlers';
import { WorkerWatchService } from '../queue/worker-watch.service';
import { CatalogClient, CatalogRefusedError } from '../catalog-client/catalog.client';
import { TrailMetrics } from './trail-metrics.service';
import {
  TRAIL_QUEUE,
  TrailEvent,
  TrailJobName,
  TrailJobResults,
  trailBackoffMs,
} from './trail.queue';

/**
 * Worker options from settings, applied to the processor class before the worker is created.
 * One job at a time, so events reach the catalog in the queue's order. The limiter is never
 * reached by deliveries (its maximum is far above any rate); it is what lets a failed delivery
 * pause the whole queue (`queue.rateLimit`), for every worker, while the event waits at the head.
 */
export function configureTrailProcessor(settings: ProvisionerSettings): void {
  const options: Partial<WorkerOptions> = {
    concurrency: 1,
    limiter: { max: 1_000_000, duration: 1000 },
    lockDuration: settings.IMPORT_LOCK_MS,
    stalledInterval: Math.max(1000, Math.floor(settings.IMPORT_LOCK_MS / 2)),
    // A worker killed mid-delivery leaves the job stalled: it goes back to the head, never fails.
    // PostgreSQL's largest integer: BullMQ's PostgreSQL backend binds the count as one, and a
    // larger number failed every stalled check there.
    maxStalledCount: 2_147_483_647,
  };
  Processor({ name: TRAIL_QUEUE }, options)(TrailProcessor);
}

/**
 * Delivers trail events to the catalog (worker process only), one at a time in order. The
 * catalog unreachable or answering 5xx: the queue pauses with exponential backoff and the same
 * event is delivered again first (`Worker.RateLimitError` puts it back at the head of the queue,
 * its attempts untouched), so nothing is lost or reordered however long the outage, or until a
 * refused key (401, 403) is set right. Another 4xx is a malformed event: failed and kept
 * (counted, one log line), and delivery goes on.
 */
@Processor(TRAIL_QUEUE)
export class TrailProcessor extends WorkerHost implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger(TrailProcessor.name);
  private readonly handlers = this.jobHandlers();
  /** Deliveries failed in a row: the backoff grows with them, and one success resets it. */
  private failures = 0;

  constructor(
    @InjectQueue(TRAIL_QUEUE) private readonly queue: Queue,
    @Inject(PROVISIONER_SETTINGS) private readonly settings: ProvisionerSettings,
    private readonly catalog: CatalogClient,
    private readonly metrics: TrailMetrics,
    private readonly watch: WorkerWatchService,
  ) {
    super();
  }

  jobHandlers(): JobHandlers<TrailJobResults> {
    return { [TrailJobName.Report]: (job: Job<TrailEvent>) => this.report(job) };
  }

  onModuleInit(): void {
    assertEveryJobHasHandler(TRAIL_QUEUE, Object.values(TrailJobName), this.handlers);
  }

  onApplicationBootstrap(): void {
    this.watch.watch(this.worker);
  }

  process(job: Job): Promise<unknown> {
    const handler = this.handlers[job.name as TrailJobName] as
      ((job: Job) => Promise<unknown>) | undefined;
    if (!handler) throw new UnrecoverableError(`no handler for job ${job.name}`);
    return handler(job);
  }

  private async report(job: Job<TrailEvent>): Promise<TrailJobResults[TrailJobName.Report]> {
    try {
      const result = await this.catalog.reportEvents([job.data]);
      this.failures = 0;
      this.metrics.record(result.recorded > 0 ? 'recorded' : 'already');
      return result;
    } catch (error) {
      const message = (error as Error).message;
      // The key refused (401, 403) is this deployment's settings, not the event: wait, in order.
      if (error instanceof CatalogRefusedError && error.status !== 401 && error.status !== 403) {
        this.metrics.record('refused');
        this.logger.warn(
          `trail event ${job.data.id} (${job.data.type}) refused by the catalog: ${error.reason}: ${message}`,
        );
        throw new UnrecoverableError(message);
      }
      this.failures += 1;
      const wait = trailBackoffMs(this.failures, this.settings.CATALOG_RETRY_DELAY_MS);
      if (this.failures === 1) {
        this.logger.warn(`trail delivery paused (the catalog cannot take events): ${message}`);
      }
      this.metrics.record('retried');
      await this.queue.rateLimit(wait);
      throw Worker.RateLimitError();
    }
  }
}
