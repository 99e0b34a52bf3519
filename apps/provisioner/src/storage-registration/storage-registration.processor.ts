import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { Job, UnrecoverableError, WorkerOptions } from 'bullmq';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';
import { ImportRecordsRepository, JobLock } from '../imports/import-records.repository';
import type { CatalogRegistrationState } from '../imports/import.queue';
import { STORAGE_SYSTEM } from '../storage/storage.module';
import type { StorageSystem } from '../storage/storage-system';
import { CatalogClient, CatalogRefusedError } from '../catalog-client/catalog.client';
import { StorageRegistrationMetrics } from './storage-registration-metrics.service';
import {
  STORAGE_REGISTRATION_QUEUE,
  StorageRegistrationJobData,
  StorageRegistrationJobName,
  StorageRegistrationJobResult,
  StorageRegistrationJobResults,
} from './storage-registration.queue';
import { assertEveryJobHasHandler, JobHandlers } from '../queue/job-handlers';
import { WorkerWatchService } from '../queue/worker-watch.service';
import { describeRegistration, RegistrationUnusableError } from './registration-description';

/** Worker options from settings; applied to the processor class before the worker is created. */
export function configureStorageRegistrationProcessor(settings: ProvisionerSettings): void {
  const options: Partial<WorkerOptions> = {
    concurrency: 4,
    // A worker killed mid-call leaves the job stalled: it is retried, never failed for that.
    lockDuration: settings.IMPORT_LOCK_MS,
    stalledInterval: Math.max(1000, Math.floor(settings.IMPORT_LOCK_MS / 2)),
    maxStalledCount: settings.CATALOG_MAX_ATTEMPTS,
  };
  Processor({ name: STORAGE_REGISTRATION_QUEUE }, options)(StorageRegistrationProcessor);
}

/**
 * Delivers registrations to the catalog (worker process only). A refusal (4xx) or a copy that
 * cannot be described is final: UnrecoverableError, counted by reason, one log line, and the
 * import record says `refused`. Anything else is thrown for BullMQ to retry with backoff.
 */
@Processor(STORAGE_REGISTRATION_QUEUE)
export class StorageRegistrationProcessor
  extends WorkerHost
  implements OnModuleInit, OnApplicationBootstrap
{
  private readonly logger = new Logger(StorageRegistrationProcessor.name);
  private readonly handlers = this.jobHandlers();

  constructor(
    @Inject(STORAGE_SYSTEM) private readonly storage: StorageSystem,
    private readonly records: ImportRecordsRepository,
    @Inject(PROVISIONER_SETTINGS) private readonly settings: ProvisionerSettings,
    private readonly catalog: CatalogClient,
    private readonly metrics: StorageRegistrationMetrics,
    private readonly watch: WorkerWatchService,
  ) {
    super();
  }

  /** What runs each job name of the registration queue. */
  jobHandlers(): JobHandlers<StorageRegistrationJobResults> {
    return {
      [StorageRegistrationJobName.Register]: (
        job: Job<StorageRegistrationJobData>,
        token?: string,
      ) => this.register(job, token),
    };
  }

  /** Before the worker takes a job: a job name without a handler stops the boot. */
  onModuleInit(): void {
    assertEveryJobHasHandler(
      STORAGE_REGISTRATION_QUEUE,
      Object.values(StorageRegistrationJobName),
      this.handlers,
    );
  }

  /** The worker runs from its creation (autorun); from now on it is watched across outages. */
  onApplicationBootstrap(): void {
    this.watch.watch(this.worker);
  }

  process(job: Job, token?: string): Promise<unknown> {
    const handler = this.handlers[job.name as StorageRegistrationJobName] as
      ((job: Job, token?: string) => Promise<unknown>) | undefined;
    if (!handler) throw new UnrecoverableError(`no handler for job ${job.name}`);
    return handler(job, token);
  }

  private async register(
    job: Job<StorageRegistrationJobData>,
    token: string | undefined,
  ): Promise<StorageRegistrationJobResult> {
    const { import_id: importId, path } = job.data;
    const lock: JobLock | null =
      token === undefined ? null : { queue: STORAGE_REGISTRATION_QUEUE, jobId: job.id!, token };
    const recordOnImport = (catalog: CatalogRegistrationState) =>
      this.recordOnImport(importId, lock, catalog);
    try {
      const registration = await describeRegistration(
        this.storage,
        importId,
        path,
        this.settings.CATALOG_STORAGE_PLATFORM,
        job.data.published_on,
        this.settings.drs?.host,
      );
      const { accession } = await this.catalog.register(registration);
      const drsUri = registration.storage.drs_uri;
      await recordOnImport({
        state: 'registered',
        accession,
        error: null,
        ...(drsUri === undefined ? {} : { drs_uri: drsUri }),
      });
      this.metrics.record('registered');
      this.logger.log(`import ${importId} registered in the catalog as ${accession}`);
      return { accession };
    } catch (error) {
      const message = (error as Error).message;
      if (error instanceof CatalogRefusedError || error instanceof RegistrationUnusableError) {
        await recordOnImport({
          state: 'refused',
          accession: null,
          error: { code: error.reason, message },
        });
        this.metrics.record('refused', error.reason);
        this.logger.warn(`import ${importId} refused by the catalog: ${error.reason}: ${message}`);
        throw new UnrecoverableError(message);
      }
      const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      await recordOnImport({
        state: 'pending',
        accession: null,
        error: { code: last ? 'catalog_gave_up' : 'catalog_unavailable', message },
      });
      if (last) {
        this.metrics.record('gave_up', 'catalog_unavailable');
        this.logger.warn(
          `import ${importId} not registered after ${job.opts.attempts} attempts: ${message}`,
        );
      }
      throw error;
    }
  }

  /**
   * The import record shows the registration: its job's data carries the state, written only
   * while this registration job holds its lock (a registration worker frozen past it, whose job
   * another worker took over, never overwrites the newer state).
   */
  private async recordOnImport(
    importId: string,
    lock: JobLock | null,
    catalog: CatalogRegistrationState,
  ): Promise<void> {
    const written =
      lock !== null && (await this.records.writeLocked(importId, lock, { data: { catalog } }));
    if (!written)
      this.logger.warn(
        `import ${importId}: registration ${catalog.state} not recorded (the import is gone, or this worker lost the registration's lock)`,
      );
  }
}
