import { tmpdir } from 'node:os';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import {
  BeforeApplicationShutdown,
  Inject,
  Logger,
  OnApplicationBootstrap,
  OnModuleInit,
} from '@nestjs/common';
import { Job, UnrecoverableError, WaitingError, WorkerOptions } from 'bullmq';
import { StorageRegistrationProducer } from '../storage-registration/storage-registration.producer';
import { TrailEmitter } from '../trail/trail-emitter';
import { derivedEventId } from '../trail/trail.queue';
import { PROVISIONER_SETTINGS, type ProvisionerSettings } from '../config/provisioner.settings';
import type { SourceLimits } from '../config/source-config';
import type { ValidatorConfig } from '../config/validator-config';
import { attemptStagingId } from './attempt-staging';
import { ValidatorWorkArea } from './validation/validator-work-area';
import { AttemptLease, LeaseLostError, leasedStorage } from './leased-storage';
import { runDatasetImport } from './dataset-import-pipeline';
import { ImportRejectedError, ImportStoppedError, ImportTransientError } from './import-errors';
import { ImportTimeline } from './import-steps';
import { CopyThreadPool, FileBudget } from './copying';
import { ensureSubmissionCollection } from './submission-collection';
import { PROVISIONER_VERSION } from './provisioner-version';
import { boundedError } from '../imports/record-bounds';
import { badInputRejection } from './fs-errors';
import { ImportMetrics, ImportOutcome } from '../metrics/import-metrics.service';
import { assertEveryJobHasHandler, JobHandlers } from '../queue/job-handlers';
import { WorkerWatchService } from '../queue/worker-watch.service';
import { SourceRegistry } from '../sources/source-registry';
import { SourceRefusedError, SourceSystem, SourceUnavailableError } from '../sources/source-system';
import { STORAGE_SYSTEM } from '../storage/storage.module';
import type { StorageSystem } from '../storage/storage-system';
import {
  ImportRecordsRepository,
  JobLock,
  RecordWrite,
} from '../imports/import-records.repository';
import { LockLostError } from '../imports/lock-lost-error';
import { ImportSyncService } from './import-sync.service';
import {
  IMPORT_KINDS,
  ImportJobData,
  ImportJobName,
  ImportJobResult,
  ImportJobResults,
  IMPORTS_QUEUE,
} from '../imports/import.queue';
import { logSafeMessage } from '@app/errors';

/** Worker options from settings; applied to the processor class before the worker is created. */
export function importWorkerOptions(settings: ProvisionerSettings): Partial<WorkerOptions> {
  return {
    concurrency: settings.IMPORT_CONCURRENCY,
    lockDuration: settings.IMPORT_LOCK_MS,
    stalledInterval: Math.max(1000, Math.floor(settings.IMPORT_LOCK_MS / 2)),
    // A worker that dies mid-copy leaves its job stalled; BullMQ's default (1) fails the job for
    // good on the second such death. A dead worker is a transient fault: allow as many as attempts.
    maxStalledCount: settings.IMPORT_MAX_ATTEMPTS,
    // Started by hand, so the processor knows why its run loop ends (see onApplicationBootstrap).
    autorun: false,
  };
}

/** Configures the processor from settings (decorators are functions: re-applied with options). */
export function configureImportProcessor(settings: ProvisionerSettings): void {
  Processor({ name: IMPORTS_QUEUE }, importWorkerOptions(settings))(ImportProcessor);
}

/**
 * Runs in the worker process only. Every job name must have a handler: the handler map's type
 * makes a missing one a compile error, boot stops on one (onModuleInit), and a job of a name
 * this worker does not know fails permanently.
 */
@Processor(IMPORTS_QUEUE)
export class ImportProcessor
  extends WorkerHost
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger(ImportProcessor.name);
  private readonly handlers = this.jobHandlers();
  /** Aborted at shutdown: running imports stop copying and are handed over (process()). */
  private readonly stopping = new AbortController();
  /** The running dataset attempts' leases on their jobs' locks, by job id. */
  private readonly leases = new Map<string, AttemptLease>();
  private readonly lockMs: number;
  /** SOURCE_*_MAX_BYTES: the worker's preflight reads the manifests within what the API does. */
  private readonly sourceLimits: SourceLimits;
  /** Each source's validators (SOURCES[].validators), by source name. */
  private readonly validators: Map<string, ValidatorConfig[]>;
  /** Where validations work, bounded (VALIDATOR_WORK_DIR, VALIDATOR_WORK_MAX_BYTES). */
  private readonly validatorWork: ValidatorWorkArea;

  constructor(
    private readonly registry: SourceRegistry,
    private readonly sync: ImportSyncService,
    @Inject(STORAGE_SYSTEM) private readonly storage: StorageSystem,
    private readonly metrics: ImportMetrics,
    private readonly records: ImportRecordsRepository,
    private readonly copyPool: CopyThreadPool,
    private readonly fileBudget: FileBudget,
    private readonly registrations: StorageRegistrationProducer,
    private readonly trail: TrailEmitter,
    private readonly watch: WorkerWatchService,
    @Inject(PROVISIONER_SETTINGS) settings: ProvisionerSettings,
  ) {
    super();
    this.lockMs = settings.IMPORT_LOCK_MS;
    this.sourceLimits = settings.sourceLimits;
    this.validators = new Map(settings.sources.map((s) => [s.name, s.validators ?? []]));
    this.validatorWork = new ValidatorWorkArea(
      settings.VALIDATOR_WORK_DIR ?? tmpdir(),
      settings.VALIDATOR_WORK_MAX_BYTES,
    );
  }

  /** What runs each job name of the imports queue. */
  jobHandlers(): JobHandlers<ImportJobResults> {
    return {
      [ImportJobName.Ping]: () =>
        Promise.resolve({ pong: true as const, receivedAt: new Date().toISOString() }),
      [ImportJobName.Dataset]: (job: Job<ImportJobData>, token?: string) =>
        this.runImport(job, this.lockOf(job, token), (source, lock) =>
          this.importDataset(job, source, lock),
        ),
      [ImportJobName.Submission]: (job: Job<ImportJobData>, token?: string) =>
        this.runImport(job, this.lockOf(job, token), (source) =>
          this.importSubmission(job, source),
        ),
      [ImportJobName.Sync]: () => this.sync.run(),
    };
  }

  /** Before the worker takes a job: a job name without a handler stops the boot. */
  onModuleInit(): void {
    assertEveryJobHasHandler(IMPORTS_QUEUE, Object.values(ImportJobName), this.handlers);
  }

  /**
   * Takes jobs at once; start-up reconciliation runs beside them (StartupReconciliationService).
   * The watch restarts a run loop that ends and tells readiness (WorkerWatchService).
   */
  onApplicationBootstrap(): void {
    // The copy threads start with the worker, not with its first import: a fresh worker (a
    // scale-up, a drained node's replacement) would otherwise add their start-up to the first
    // import it takes. A thread that fails to load fails that import's batches instead.
    this.copyPool.start().catch(() => undefined);
    // Likewise the store's one-off measurement (the write-path probe): a first import of small
    // files, which never writes past the page cache, would otherwise wait for it.
    this.storage.prepareImports?.().catch(() => undefined);
    // Plain text a killed worker left for its validators goes at start, not at the next validation.
    this.validatorWork
      .sweepOnce()
      .catch((error: unknown) =>
        this.logger.warn(`validator work directory not swept: ${logSafeMessage(error)}`),
      );
    this.worker
      .run()
      .catch((error: unknown) =>
        this.logger.error(`import worker stopped: ${logSafeMessage(error)}`),
      );
    this.watch.watch(this.worker);
  }

  /**
   * SIGTERM: no job is taken any more, and each running import stops after the chunk it is
   * copying, records what it staged and goes back to the queue (process()), where any worker
   * resumes it at once. Resolves when every running job has ended or been handed over.
   */
  async beforeApplicationShutdown(): Promise<void> {
    let closed: Promise<void> | undefined;
    try {
      closed = this.worker.close();
    } catch {
      // Never created (a boot that stopped before the workers were registered): nothing runs.
    }
    this.stopping.abort();
    await closed;
  }

  /**
   * The listing's index hears of every state an import job takes here (queued and removed are
   * told by the producers); anything missed, it repairs as it reads.
   */
  @OnWorkerEvent('active')
  onActive(job: Job): void {
    this.indexState(job);
  }

  @OnWorkerEvent('completed')
  onCompleted(job: Job): void {
    this.indexState(job);
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job | undefined): void {
    if (job) this.indexState(job);
  }

  private indexState(job: Job): void {
    if (!IMPORT_KINDS.includes(job.name as ImportJobName.Dataset)) return;
    this.records
      .touched(job.id!)
      .catch((error: unknown) =>
        this.logger.warn({ err: error }, `import ${job.id}: index not updated`),
      );
  }

  /** Connection trouble as a structured log line; the worker reconnects by itself. */
  @OnWorkerEvent('error')
  onWorkerError(error: Error): void {
    this.logger.warn({ err: error }, 'worker connection error; reconnecting');
  }

  /** The queue confirmed renewals of these jobs' locks (every IMPORT_LOCK_MS / 4). */
  @OnWorkerEvent('locksRenewed')
  onLocksRenewed({ jobIds }: { jobIds: string[] }): void {
    for (const id of jobIds) this.leases.get(id)?.renewed();
  }

  @OnWorkerEvent('lockRenewalFailed')
  onLockRenewalFailed(jobIds: string[]): void {
    for (const id of jobIds) this.leases.get(id)?.lose('the queue refused to renew the lock');
  }

  async process(job: Job, token?: string): Promise<unknown> {
    const handler = this.handlers[job.name as ImportJobName] as
      ((job: Job, token?: string) => Promise<unknown>) | undefined;
    if (!handler) throw new UnrecoverableError(`no handler for job ${job.name}`);
    try {
      return await handler(job, token);
    } catch (error) {
      if (!(error instanceof ImportStoppedError) || token === undefined) throw error;
      await this.handOver(job as Job<ImportJobData>, token, error);
      // Tells BullMQ the job was moved (to waiting) by its processor: not failed, not retried.
      throw new WaitingError();
    }
  }

  /** The import's lock as this worker holds it: every write on its record is made under it. */
  private lockOf(job: Job, token: string | undefined): JobLock {
    if (token === undefined) throw new Error(`import ${job.id} was handed over without its lock`);
    return { queue: IMPORTS_QUEUE, jobId: job.id!, token };
  }

  /** Writes on the import's record while this attempt holds its lock, else throws. */
  private async writeRecord(job: Job, lock: JobLock, write: RecordWrite): Promise<void> {
    if (!(await this.records.writeLocked(job.id!, lock, write))) throw new LockLostError(job.id!);
  }

  /**
   * Back to waiting, lock released: the next worker to ask takes it at once and keeps what this
   * attempt staged. When that cannot be done (the queue unreachable), the lock lapses instead
   * and the job is taken up as a dead worker's would be.
   */
  private async handOver(job: Job<ImportJobData>, token: string, stop: Error): Promise<void> {
    try {
      // The duration metric counts from the first attempt, whichever worker resumes it.
      if (job.data.first_started_at === undefined)
        await this.writeRecord(job, this.lockOf(job, token), {
          data: { first_started_at: job.processedOn ?? Date.now() },
        });
      await job.moveToWait(token);
      this.indexState(job);
      this.logger.log(`import ${job.id} attempt ${job.attemptsStarted}: ${stop.message}`);
    } catch (error) {
      this.logger.warn(
        `import ${job.id}: not handed over (${logSafeMessage(error)}); it is taken up once its lock lapses`,
      );
    }
  }

  /**
   * A dataset attempt writes through its lease: should its lock lapse (the queue unreachable for
   * longer than IMPORT_LOCK_MS), it stops writing and never publishes over the attempt that
   * took the job over. A newer attempt of the same job in this process means the older one's
   * lock lapsed already.
   */
  private async importDataset(
    job: Job<ImportJobData>,
    source: SourceSystem,
    lock: JobLock,
  ): Promise<ImportJobResult> {
    const lease = new AttemptLease(
      job.id!,
      this.lockMs,
      async () => (await job.extendLock(lock.token, this.lockMs)) === 1,
    );
    this.leases.get(job.id!)?.lose(`attempt ${job.attemptsStarted} took the job over`);
    this.leases.set(job.id!, lease);
    try {
      return await this.importDatasetLeased(job, source, lease, lock);
    } finally {
      if (this.leases.get(job.id!) === lease) this.leases.delete(job.id!);
    }
  }

  private async importDatasetLeased(
    job: Job<ImportJobData>,
    source: SourceSystem,
    lease: AttemptLease,
    lock: JobLock,
  ): Promise<ImportJobResult> {
    const timeline = new ImportTimeline(this.metrics);
    this.logger.log(`import ${job.id} attempt ${job.attemptsStarted} started`);
    const result = await runDatasetImport({
      importId: job.id!,
      attempt: job.attemptsStarted,
      queuedAt: new Date(job.timestamp),
      source,
      storage: leasedStorage(this.storage, lease),
      datasetId: job.data.key,
      versions: { provisioner: PROVISIONER_VERSION, node: process.version },
      reportProgress: (progress) => this.writeRecord(job, lock, { progress }),
      copyMeter: this.metrics,
      copyPool: this.copyPool,
      fileBudget: this.fileBudget,
      sourceLimits: this.sourceLimits,
      validators: this.validators.get(source.name),
      validatorWork: this.validatorWork,
      timeline,
      signal: this.stopping.signal,
      lastAttempt: job.attemptsMade + 1 >= (job.opts.attempts ?? 1),
    });
    if (result.copied)
      this.logger.log(
        `import ${job.id} steps (ms): ${timeline.toString()} wall=${Math.round(timeline.elapsedMs())}`,
      );
    await this.registrations.enqueue(job, lock, result.path); // the catalog outbox
    // The trail's record of the publication: one id per import job (a retried attempt, which
    // finds the copy published, reaches here again: the job is still queued or kept, so nothing
    // new is queued, or it was delivered behind another and removed, and the catalog, holding
    // the id, records it once).
    await this.trail.emit({
      id: derivedEventId('import.publish', job.id!, String(job.timestamp)),
      type: 'import.publish',
      object_id: job.id!,
      location: result.path,
    });
    return result;
  }

  private async importSubmission(
    job: Job<ImportJobData>,
    source: SourceSystem,
  ): Promise<ImportJobResult> {
    const submission = await source.getSubmission(job.data.key);
    if (!submission)
      throw new ImportRejectedError(
        'unknown_submission',
        `source ${source.name} no longer lists submission ${job.data.key}`,
      );
    const result = await ensureSubmissionCollection(
      this.storage,
      source,
      submission,
      attemptStagingId(job.id!, 'collection', job.attemptsStarted),
      new Date(),
    );
    return { path: result.path, files: 0, bytes: 0, copied: result.created };
  }

  /** Records why an attempt failed on the job, and whether it is final (rejected) or retried. */
  private async runImport(
    job: Job<ImportJobData>,
    lock: JobLock,
    work: (source: SourceSystem, lock: JobLock) => Promise<ImportJobResult>,
  ): Promise<ImportJobResult> {
    const source = this.registry.get(job.data.source);
    const firstStartedAt = job.data.first_started_at ?? Date.now();
    const ended = (outcome: ImportOutcome) =>
      this.metrics.recordImport(outcome, (Date.now() - firstStartedAt) / 1000);
    try {
      if (!source)
        throw new ImportRejectedError(
          'unknown_source',
          `source ${job.data.source} is not configured`,
        );
      const result = await work(source, lock).catch((error: unknown) => {
        // Metadata the source refuses (a linked submission.json...) needs a human, not a retry.
        if (error instanceof SourceRefusedError)
          throw new ImportRejectedError('metadata_refused', error.message, error.problems);
        throw error;
      });
      this.logger.log(
        `import ${job.id} done: ${result.path} (${result.files} files, ${result.bytes} bytes)`,
      );
      ended('imported');
      return result;
    } catch (caught) {
      if (caught instanceof ImportStoppedError) throw caught; // handed over by process()
      // Not this attempt's job any more: the record belongs to the attempt holding the lock.
      if (caught instanceof LeaseLostError) {
        this.logger.warn(`${caught.message}; stopped, the attempt holding the lock goes on`);
        throw caught;
      }
      // A system error of bad input (ENAMETOOLONG, ELOOP...) is a rejection, never retried.
      const error = badInputRejection(caught) ?? caught;
      const rejected = error instanceof ImportRejectedError;
      const known = rejected || error instanceof ImportTransientError;
      const code = known
        ? error.code
        : error instanceof SourceUnavailableError
          ? 'source_unavailable'
          : ((error as NodeJS.ErrnoException).code ?? 'internal_error');
      const message = (error as Error).message;
      const written = await this.records.writeLocked(job.id!, lock, {
        data: {
          // Bounded (1,000 problems, short texts): the record is read whole by every request.
          error: boundedError({
            code,
            message,
            details: known ? error.details : [],
            permanent: rejected,
          }),
          first_started_at: firstStartedAt,
        },
      });
      if (!written) {
        // Another worker took the import over (this one was frozen past its lock): the record
        // and the outcome are that worker's; BullMQ refuses this attempt's move as well.
        this.logger.warn(
          `import ${job.id} attempt ${job.attemptsStarted} ended after losing its lock (${code}: ${message}); its record was left to the import's owner`,
        );
        throw error;
      }
      this.logger.warn(
        `import ${job.id} attempt ${job.attemptsStarted} ${rejected ? 'rejected' : 'failed'}: ${code}: ${message}`,
      );
      // BullMQ retries while attemptsMade + 1 < attempts: this is the last one otherwise.
      if (rejected) ended('rejected');
      else if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) ended('failed');
      if (rejected) throw new UnrecoverableError(message);
      throw error;
    }
  }
}
