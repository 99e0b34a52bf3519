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
  TRAIL_BATCH_MAX,
  TrailJobResults,
  trailBackoffMs,
} from './trail.queue';

/** Jobs asked of the queue at once while a batch is taken. */
const TRAIL_TAKEN_AT_ONCE = 100;

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
 * Delivers trail events to the catalog (worker process only), in the queue's order: the job the
 * worker took, and behind it, taken from the queue at once, every job waiting up to
 * TRAIL_BATCH_MAX in all, in one request (one transaction at the catalog, which skips an event id
 * it already holds). The catalog unreachable or answering 5xx: the whole batch goes back to the
 * head of the queue in its order (`job.moveToWait` for the ones taken with it, last first, then
 * `Worker.RateLimitError` for the first, attempts untouched) and the queue pauses with
 * exponential backoff, so nothing is lost or reordered however long the outage, or until a
 * refused key (401, 403) is set right. Another 4xx is a malformed event: a batch goes back and
 * its events are delivered one at a time until past it; the one refused is failed and kept
 * (counted, one log line), and delivery goes on.
 */
@Processor(TRAIL_QUEUE)
export class TrailProcessor extends WorkerHost implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger(TrailProcessor.name);
  private readonly handlers = this.jobHandlers();
  /** Deliveries failed in a row: the backoff grows with them, and one success resets it. */
  private failures = 0;
  /** Events still to deliver one at a time, after a batch the catalog refused. */
  private singles = 0;

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
    return {
      [TrailJobName.Report]: (job: Job<TrailEvent>, token?: string) => this.report(job, token),
    };
  }

  onModuleInit(): void {
    assertEveryJobHasHandler(TRAIL_QUEUE, Object.values(TrailJobName), this.handlers);
  }

  onApplicationBootstrap(): void {
    this.watch.watch(this.worker);
  }

  process(job: Job, token?: string): Promise<unknown> {
    const handler = this.handlers[job.name as TrailJobName] as
      ((job: Job, token?: string) => Promise<unknown>) | undefined;
    if (!handler) throw new UnrecoverableError(`no handler for job ${job.name}`);
    return handler(job, token);
  }

  private async report(
    job: Job<TrailEvent>,
    token: string | undefined,
  ): Promise<TrailJobResults[TrailJobName.Report]> {
    const behind = await this.takeWaiting(token);
    // In the order queued: jobs a dead worker left stalled come back to the queue in no
    // particular order (BullMQ keeps them in a set); the sort is stable, so ties keep theirs.
    const batch = [job, ...behind].sort((a, b) => a.timestamp - b.timestamp);
    // The jobs taken by hand are not the worker's to keep locked: held here while delivering.
    const held = setInterval(
      () => behind.forEach((one) => void one.extendLock(token!, this.lockMs()).catch(() => 0)),
      Math.max(500, Math.floor(this.lockMs() / 3)),
    );
    let result: TrailJobResults[TrailJobName.Report];
    try {
      result = await this.catalog.reportEvents(batch.map((one) => one.data));
    } catch (error) {
      await this.putBack(behind, token);
      return await this.failed(job, batch.length, error as Error, token);
    } finally {
      clearInterval(held);
    }
    this.failures = 0;
    this.singles = Math.max(0, this.singles - 1);
    this.metrics.record('recorded', result.recorded);
    this.metrics.record('already', result.already);
    // Each job taken with the first reports the batch's counts, as the first does. One whose
    // lock was lost meanwhile is delivered again later: the catalog answers `already`.
    // Sent at once (one round trip, not one per event): their order no longer matters.
    await Promise.all(
      behind.map((one) =>
        one.moveToCompleted(result, token!, false).catch((error: Error) => {
          this.logger.warn(`trail event ${one.data.id} delivered, not marked so: ${error.message}`);
        }),
      ),
    );
    return result;
  }

  /** The jobs waiting behind the one being delivered, in order (none after a refused batch). */
  private async takeWaiting(token: string | undefined): Promise<Job<TrailEvent>[]> {
    const taken: Job<TrailEvent>[] = [];
    if (token === undefined || this.singles > 0) return taken;
    // Asked TRAIL_TAKEN_AT_ONCE at a time on the one connection: Redis runs the moves in the
    // order sent and the answers come back in it, so the jobs keep the queue's order, and a
    // batch costs a few round trips instead of one per event.
    while (taken.length < TRAIL_BATCH_MAX - 1) {
      const want = Math.min(TRAIL_TAKEN_AT_ONCE, TRAIL_BATCH_MAX - 1 - taken.length);
      const next = await Promise.all(
        Array.from({ length: want }, () => this.worker.getNextJob(token, { block: false })),
      );
      let got = 0;
      for (const one of next) {
        if (one === undefined) continue;
        taken.push(one as Job<TrailEvent>);
        got += 1;
      }
      if (got < want) break;
    }
    return taken;
  }

  /** Back to the head of the queue in their order, ahead of everything else but the first. */
  private async putBack(jobs: Job<TrailEvent>[], token: string | undefined): Promise<void> {
    for (const one of [...jobs].reverse()) await one.moveToWait(token);
  }

  private async failed(
    job: Job<TrailEvent>,
    size: number,
    error: Error,
    token: string | undefined,
  ): Promise<TrailJobResults[TrailJobName.Report]> {
    const message = error.message;
    // The key refused (401, 403) is this deployment's settings, not the event: wait, in order.
    if (error instanceof CatalogRefusedError && error.status !== 401 && error.status !== 403) {
      if (size > 1) {
        // Which event it was is found by delivering them one at a time: the first again now.
        this.singles = size;
        return this.report(job, token);
      }
      this.singles = Math.max(0, this.singles - 1);
      this.metrics.record('refused');
      this.logger.warn(
        `trail event ${job.data.id} (${job.data.type}) refused by the catalog: ${error.reason}: ${message}`,
      );
      throw new UnrecoverableError(message);
    }
    return this.pause(message);
  }

  private async pause(message: string): Promise<never> {
    this.failures += 1;
    const wait = trailBackoffMs(this.failures, this.settings.CATALOG_RETRY_DELAY_MS);
    if (this.failures === 1) {
      this.logger.warn(`trail delivery paused (the catalog cannot take events): ${message}`);
    }
    this.metrics.record('retried');
    await this.queue.rateLimit(wait);
    throw Worker.RateLimitError();
  }

  private lockMs(): number {
    return this.settings.IMPORT_LOCK_MS;
  }
}
