import { InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { Job, Queue, UnrecoverableError, WorkerOptions } from 'bullmq';
import { StorageRegistrationProducer } from '../storage-registration/storage-registration.producer';
import type { ProvisionerSettings } from '../config/provisioner.settings';
import { attemptStagingId } from './attempt-staging';
import { runDatasetImport } from './dataset-import-pipeline';
import { ImportRejectedError, ImportTransientError } from './import-errors';
import { PhaseClock } from './import-phases';
import { CopyThreadPool } from './copy-thread-pool';
import { ensureSubmissionCollection } from './submission-collection';
import { PROVISIONER_VERSION } from './provisioner-version';
import { boundedError } from '../imports/record-bounds';
import { badInputRejection } from './fs-errors';
import { ImportMetrics, ImportOutcome } from '../metrics/import-metrics.service';
import { assertEveryJobHasHandler, JobHandlers } from '../queue/job-handlers';
import { SourceRegistry } from '../sources/source-registry';
import { SourceRefusedError, SourceSystem, SourceUnavailableError } from '../sources/source-system';
import { STORAGE_SYSTEM } from '../storage/storage.module';
import { StorageRefusedError, type StorageSystem } from '../storage/storage-system';
import { ImportRecordsRepository } from '../imports/import-records.repository';
import { ImportSyncService } from './import-sync.service';
import {
  IMPORT_KINDS,
  ImportJobData,
  ImportJobName,
  ImportJobResult,
  ImportJobResults,
  IMPORTS_QUEUE,
} from '../imports/import.queue';
import { reconcileStorage } from './startup-reconciliation';
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
    // Started by hand once start-up reconciliation is done (see onApplicationBootstrap).
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
export class ImportProcessor extends WorkerHost implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger(ImportProcessor.name);
  private readonly handlers = this.jobHandlers();

  constructor(
    private readonly registry: SourceRegistry,
    private readonly sync: ImportSyncService,
    @Inject(STORAGE_SYSTEM) private readonly storage: StorageSystem,
    @InjectQueue(IMPORTS_QUEUE) private readonly queue: Queue,
    private readonly metrics: ImportMetrics,
    private readonly records: ImportRecordsRepository,
    private readonly copyPool: CopyThreadPool,
    private readonly registrations: StorageRegistrationProducer,
  ) {
    super();
  }

  /** What runs each job name of the imports queue. */
  jobHandlers(): JobHandlers<ImportJobResults> {
    return {
      [ImportJobName.Ping]: () =>
        Promise.resolve({ pong: true as const, receivedAt: new Date().toISOString() }),
      [ImportJobName.Dataset]: (job: Job<ImportJobData>) =>
        this.runImport(job, (source) => this.importDataset(job, source)),
      [ImportJobName.Submission]: (job: Job<ImportJobData>) =>
        this.runImport(job, (source) => this.importSubmission(job, source)),
      [ImportJobName.Sync]: () => this.sync.run(),
    };
  }

  /** Before the worker takes a job: a job name without a handler stops the boot. */
  onModuleInit(): void {
    assertEveryJobHasHandler(IMPORTS_QUEUE, Object.values(ImportJobName), this.handlers);
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.reconcile();
    this.worker
      .run()
      .catch((error: unknown) =>
        this.logger.error(`import worker stopped: ${logSafeMessage(error)}`),
      );
  }

  /**
   * A store that refuses the worker (credential, bucket) is no reason to stop it: readiness says
   * why, each import is rejected visibly with `storage_refused`, and the next start reconciles.
   */
  private async reconcile(): Promise<void> {
    let report;
    try {
      report = await reconcileStorage(this.storage, this.queue);
    } catch (error) {
      if (!(error instanceof StorageRefusedError)) throw error;
      this.logger.error(`start-up reconciliation skipped: ${error.message}`);
      return;
    }
    if (report.stagingRemoved.length)
      this.logger.log(`removed staging left by dead attempts: ${report.stagingRemoved.join(', ')}`);
    for (const path of report.withoutProvenance)
      this.logger.warn(`published dataset without provenance (left untouched): ${path}`);
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

  process(job: Job): Promise<unknown> {
    const handler = this.handlers[job.name as ImportJobName] as
      ((job: Job) => Promise<unknown>) | undefined;
    if (!handler) throw new UnrecoverableError(`no handler for job ${job.name}`);
    return handler(job);
  }

  private async importDataset(
    job: Job<ImportJobData>,
    source: SourceSystem,
  ): Promise<ImportJobResult> {
    const phases = new PhaseClock();
    const result = await runDatasetImport({
      importId: job.id!,
      attempt: job.attemptsStarted,
      queuedAt: new Date(job.timestamp),
      source,
      storage: this.storage,
      datasetId: job.data.key,
      versions: { provisioner: PROVISIONER_VERSION, node: process.version },
      reportProgress: (progress) => job.updateProgress(progress),
      copyMeter: this.metrics,
      copyPool: this.copyPool,
      phases,
    });
    if (result.copied) this.logger.log(`import ${job.id} phases (ms): ${phases.toString()}`);
    await this.registrations.enqueue(job, result.path); // the catalog outbox (issue 17)
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
    work: (source: SourceSystem) => Promise<ImportJobResult>,
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
      const result = await work(source).catch((error: unknown) => {
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
      await job.updateData({
        ...job.data,
        // Bounded (1,000 problems, short texts): the record is read whole by every request.
        error: boundedError({
          code,
          message,
          details: known ? error.details : [],
          permanent: rejected,
        }),
        first_started_at: firstStartedAt,
      });
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
