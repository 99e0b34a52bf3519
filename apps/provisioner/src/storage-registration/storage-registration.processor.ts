import { InjectQueue, Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger } from '@nestjs/common';
import { Job, Queue, UnrecoverableError, WorkerOptions } from 'bullmq';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';
import { CatalogRegistrationState, IMPORTS_QUEUE, ImportJobData } from '../imports/import.queue';
import { STORAGE_SYSTEM } from '../storage/storage.module';
import type { StorageSystem } from '../storage/storage-system';
import { CatalogClient, CatalogRefusedError } from './catalog.client';
import { StorageRegistrationMetrics } from './storage-registration-metrics.service';
import {
  STORAGE_REGISTRATION_QUEUE,
  StorageRegistrationJobData,
  StorageRegistrationJobName,
  StorageRegistrationJobResult,
} from './storage-registration.queue';
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
export class StorageRegistrationProcessor extends WorkerHost {
  private readonly logger = new Logger(StorageRegistrationProcessor.name);

  constructor(
    @Inject(STORAGE_SYSTEM) private readonly storage: StorageSystem,
    @InjectQueue(IMPORTS_QUEUE) private readonly imports: Queue<ImportJobData>,
    @Inject(PROVISIONER_SETTINGS) private readonly settings: ProvisionerSettings,
    private readonly catalog: CatalogClient,
    private readonly metrics: StorageRegistrationMetrics,
  ) {
    super();
  }

  async process(job: Job<StorageRegistrationJobData>): Promise<StorageRegistrationJobResult> {
    if (job.name !== (StorageRegistrationJobName.Register as string))
      throw new UnrecoverableError(`no handler for job ${job.name}`);
    const { import_id: importId, path } = job.data;
    try {
      const registration = await describeRegistration(
        this.storage,
        importId,
        path,
        this.settings.CATALOG_STORAGE_PLATFORM,
        job.data.published_on,
      );
      const { accession } = await this.catalog.register(registration);
      await this.recordOnImport(importId, { state: 'registered', accession, error: null });
      this.metrics.record('registered');
      this.logger.log(`import ${importId} registered in the catalog as ${accession}`);
      return { accession };
    } catch (error) {
      const message = (error as Error).message;
      if (error instanceof CatalogRefusedError || error instanceof RegistrationUnusableError) {
        await this.recordOnImport(importId, {
          state: 'refused',
          accession: null,
          error: { code: error.reason, message },
        });
        this.metrics.record('refused', error.reason);
        this.logger.warn(`import ${importId} refused by the catalog: ${error.reason}: ${message}`);
        throw new UnrecoverableError(message);
      }
      const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      await this.recordOnImport(importId, {
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

  /** The import record shows the registration: its job's data carries the state. */
  private async recordOnImport(importId: string, catalog: CatalogRegistrationState): Promise<void> {
    const job = await Job.fromId<ImportJobData>(this.imports, importId);
    if (job) await job.updateData({ ...job.data, catalog });
  }
}
