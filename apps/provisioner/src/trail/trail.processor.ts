import { InjectQueue, Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { Job, Queue, UnrecoverableError, Worker, WorkerOptions } from 'bullmq';
import { setTimeout as delay } from 'node:timers/promises';
import { logSafeMessage } from '@app/errors';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';
import { assertEveryJobHasHandler, JobHandlers } from '../queue/job-handlers';
import { QUEUE_BACKEND } from '../queue/queue.module';
import type { QueueBackendConfig } from '../queue/queue-backend';
import { WorkerWatchService } from '../queue/worker-watch.service';
import { CatalogClient, CatalogRefusedError } from '../catalog-client/catalog.client';
import { TrailMetrics } from './trail-metrics.service';
import { TrailQueuePlaceRepository } from './trail-queue-place.repository';
import { TrailWaitingJobsRepository, type WaitingTrailJob } from './trail-waiting-jobs.repository';
import {
  TRAIL_QUEUE,
  TrailEvent,
  trailEventsOf,
  TrailJobName,
  TRAIL_BATCH_MAX,
  TrailJobResults,
  TrailReportResult,
  trailBackoffMs,
} from './trail.queue';

/** Waiting between tries to prepare the queue at start (its connection not up yet). */
const TRAIL_START_RETRY_MS = 1000;

/**
 * Worker options from settings, applied to the processor class before the worker is created.
 * One job at a time, and one in the whole queue (the queue's global concurrency, set before the
 * worker runs), so events reach the catalog in the queue's order whatever the number of worker
 * replicas. The limiter is never reached by deliveries (its maximum is far above any rate); it
 * is what lets a failed delivery pause the whole queue (`queue.rateLimit`), for every worker,
 * while the event waits at the head.
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
    // Started by hand once the queue allows one job at a time (onApplicationBootstrap).
    autorun: false,
  };
  Processor({ name: TRAIL_QUEUE }, options)(TrailProcessor);
}

/**
 * Delivers trail events to the catalog (worker process only), in the queue's order. A job holds
 * one event (`Report`, also the shape earlier versions wrote) or the events of one emit, in
 * order (`ReportEvents`); both are handled alike. The queue lets one job be active at a time,
 * across every worker and replica (global concurrency 1): the worker holding it (the head)
 * lets it wait until TRAIL_BATCH_WAIT_MS after it was queued (so the events of that moment go
 * together; a head older than that goes at once), then
 * delivers its events with those of the jobs waiting behind it, read in the queue's order
 * without being taken (up to TRAIL_BATCH_MAX events in all; a head holding more goes in several
 * requests, in order), each request one transaction at the catalog, which skips an event id it
 * already holds. Once the catalog has them, the jobs read are removed and the head completes;
 * only then can any worker take the next head. So no two deliveries ever overlap, and a worker
 * that dies mid-delivery holds everything back until its head returns to the front (stalled)
 * and is delivered again with the same jobs behind it. The catalog unreachable or answering
 * 5xx: the head goes back to the front (`Worker.RateLimitError`, attempts untouched; the jobs
 * behind it never moved) and the queue pauses with exponential backoff, so nothing is lost or
 * reordered however long the outage, or until a refused key (401, 403) is set right. Another
 * 4xx is a malformed event: jobs are then delivered one at a time until past it, and a job the
 * catalog refuses has its events delivered one by one; a job with a refused event is failed and
 * kept (its events whole; each refused one counted, one log line each), and delivery goes on.
 */
@Processor(TRAIL_QUEUE)
export class TrailProcessor extends WorkerHost implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger(TrailProcessor.name);
  private readonly handlers = this.jobHandlers();
  /** Deliveries failed in a row: the backoff grows with them, and one success resets it. */
  private failures = 0;
  /** Events still to deliver one at a time, after a batch the catalog refused. */
  private singles = 0;
  private readonly waiting: TrailWaitingJobsRepository;

  constructor(
    @InjectQueue(TRAIL_QUEUE) private readonly queue: Queue,
    @Inject(PROVISIONER_SETTINGS) private readonly settings: ProvisionerSettings,
    @Inject(QUEUE_BACKEND) private readonly backend: QueueBackendConfig,
    private readonly catalog: CatalogClient,
    private readonly metrics: TrailMetrics,
    private readonly watch: WorkerWatchService,
  ) {
    super();
    this.waiting = new TrailWaitingJobsRepository(queue);
  }

  jobHandlers(): JobHandlers<TrailJobResults> {
    return {
      [TrailJobName.Report]: (job: Job, token?: string) => this.report(job, token),
      [TrailJobName.ReportEvents]: (job: Job, token?: string) => this.report(job, token),
    };
  }

  onModuleInit(): void {
    assertEveryJobHasHandler(TRAIL_QUEUE, Object.values(TrailJobName), this.handlers);
  }

  /** Never delays the start: the worker runs once the queue is prepared (its store reachable). */
  onApplicationBootstrap(): void {
    void this.start();
  }

  /**
   * One active job in the whole queue (a setting kept in the queue's store, so every replica
   * sees it, whichever set it), and on PostgreSQL a job handed back keeps its place: only then
   * does the worker take jobs. Tried again while the store cannot be reached.
   */
  private async start(): Promise<void> {
    for (;;) {
      if (this.worker.closing) return;
      try {
        await this.queue.setGlobalConcurrency(1);
        if (this.backend.kind === 'postgres')
          await new TrailQueuePlaceRepository(this.backend.connection).install();
        break;
      } catch (error) {
        this.logger.warn(`trail queue not prepared yet: ${logSafeMessage(error)}`);
        await delay(TRAIL_START_RETRY_MS);
      }
    }
    if (this.worker.closing) return;
    this.worker
      .run()
      .catch((error: unknown) =>
        this.logger.error(`trail worker stopped: ${logSafeMessage(error)}`),
      );
    this.watch.watch(this.worker);
  }

  process(job: Job, token?: string): Promise<unknown> {
    const handler = this.handlers[job.name as TrailJobName] as
      ((job: Job, token?: string) => Promise<unknown>) | undefined;
    if (!handler) throw new UnrecoverableError(`no handler for job ${job.name}`);
    return handler(job, token);
  }

  private async report(job: Job, token: string | undefined): Promise<TrailReportResult> {
    const head = trailEventsOf(job.data);
    if (head === undefined || head.length === 0) {
      this.metrics.record('refused');
      throw new UnrecoverableError(`trail job ${job.id} holds no event`);
    }
    await this.gather(job);
    const behind = await this.waitingBehind(head.length);
    // Read while this worker held the head, nobody else took or removed a job: the read is the
    // queue's order. A worker whose lock lapsed (stalled: another one holds the head now) may
    // have read the queue while that one removed jobs from it, so it delivers nothing.
    if (token !== undefined && (await job.extendLock(token, this.lockMs())) !== 1) {
      throw new Error(`trail job ${job.id}: lock lost before delivery; another worker has it`);
    }
    const events = behind.length === 0 ? head : [...head, ...behind.flatMap((one) => one.events)];
    const result: TrailReportResult = { recorded: 0, already: 0 };
    try {
      for (let from = 0; from < events.length; from += TRAIL_BATCH_MAX) {
        await this.deliver(events.slice(from, from + TRAIL_BATCH_MAX), result);
      }
    } catch (error) {
      return this.failed(job, head, 1 + behind.length, error as Error, token);
    }
    this.failures = 0;
    this.singles = Math.max(0, this.singles - 1);
    // Delivered: gone from the queue before the head completes, so the next head is behind them
    // (one bulk removal). Any left (a failed removal) are delivered again later, and the catalog
    // answers `already`.
    await this.waiting.remove(behind.map((one) => one.id)).catch((error: Error) => {
      this.logger.warn(`trail jobs delivered (${behind.length}), not removed: ${error.message}`);
    });
    return result;
  }

  /**
   * Lets a head queued less than TRAIL_BATCH_WAIT_MS ago wait out the rest, so the events queued
   * meanwhile go in the same request: one delivery per moment, not per event. A head that waited
   * that long already (a backlog) goes at once. Its time is the producer's clock: at most the
   * setting is waited, whatever the clocks' skew.
   */
  private async gather(job: Job): Promise<void> {
    const wait = this.settings.TRAIL_BATCH_WAIT_MS;
    if (wait === 0 || this.singles > 0) return;
    const left = Math.min(wait, wait - (Date.now() - job.timestamp));
    if (left > 0) await delay(left);
  }

  /** One request; what the catalog took is counted at once, as a later one may fail. */
  private async deliver(events: TrailEvent[], result: TrailReportResult): Promise<void> {
    const answer = await this.catalog.reportEvents(events);
    this.metrics.record('recorded', answer.recorded);
    this.metrics.record('already', answer.already);
    result.recorded += answer.recorded;
    result.already += answer.already;
  }

  /**
   * The jobs waiting behind the head, oldest first, while their events fit in a batch beside the
   * head's (none while jobs go one at a time): one read of the queue, in the order its workers
   * take jobs.
   */
  private waitingBehind(headEvents: number): Promise<WaitingTrailJob[]> {
    if (this.singles > 0) return Promise.resolve([]);
    return this.waiting.oldest(TRAIL_BATCH_MAX - headEvents);
  }

  private async failed(
    job: Job,
    head: TrailEvent[],
    jobs: number,
    error: Error,
    token: string | undefined,
  ): Promise<TrailReportResult> {
    // The key refused (401, 403) is this deployment's settings, not the event: wait, in order.
    if (!refusedEvent(error)) return this.pause(error.message);
    if (jobs > 1) {
      // Which job it was is found by delivering them one at a time: the first again now.
      this.singles = jobs;
      return this.report(job, token);
    }
    if (head.length > 1) return this.oneByOne(job, head);
    this.singles = Math.max(0, this.singles - 1);
    this.refused(head[0], error);
    throw new UnrecoverableError(error.message);
  }

  /**
   * A job of many events the catalog refused: each delivered alone, in order, so the others
   * land. One refused or more: the job is failed and kept whole (delivered again, the ones that
   * landed are answered `already`).
   */
  private async oneByOne(job: Job, events: TrailEvent[]): Promise<TrailReportResult> {
    const result: TrailReportResult = { recorded: 0, already: 0 };
    let refused = 0;
    let reason = '';
    for (const event of events) {
      try {
        await this.deliver([event], result);
      } catch (error) {
        if (!refusedEvent(error as Error)) return this.pause((error as Error).message);
        refused += 1;
        reason ||= (error as Error).message;
        this.refused(event, error as CatalogRefusedError);
      }
    }
    this.failures = 0;
    this.singles = Math.max(0, this.singles - 1);
    if (refused > 0) {
      throw new UnrecoverableError(
        `${refused} of the ${events.length} events of trail job ${job.id} refused: ${reason}`,
      );
    }
    return result;
  }

  private refused(event: TrailEvent, error: CatalogRefusedError): void {
    this.metrics.record('refused');
    this.logger.warn(
      `trail event ${event.id} (${event.type}) refused by the catalog: ${error.reason}: ${error.message}`,
    );
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

/** The catalog refused the events themselves (a 4xx other than the key's 401 or 403). */
function refusedEvent(error: Error): error is CatalogRefusedError {
  return error instanceof CatalogRefusedError && error.status !== 401 && error.status !== 403;
}
