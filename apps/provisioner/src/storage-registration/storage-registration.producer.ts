import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';
import type { ImportJobData } from '../imports/import.queue';
import { ImportRecordsRepository, JobLock } from '../imports/import-records.repository';
import { LockLostError } from '../imports/lock-lost-error';
import {
  STORAGE_REGISTRATION_QUEUE,
  StorageRegistrationJobData,
  StorageRegistrationJobName,
  storageRegistrationJobId,
  storageRegistrationRetryPreset,
} from './storage-registration.queue';

/** Puts a published import in the outbox: a registration job, never a call to the catalog. */
@Injectable()
export class StorageRegistrationProducer {
  constructor(
    @InjectQueue(STORAGE_REGISTRATION_QUEUE) private readonly queue: Queue,
    @Inject(PROVISIONER_SETTINGS) private readonly settings: ProvisionerSettings,
    private readonly records: ImportRecordsRepository,
  ) {}

  /**
   * Called by a dataset import once its copy is published, under its lock. Marks the import
   * record `pending` (`off` when no catalog is configured) and queues the registration. A registration that
   * already ended (the dataset was removed from storage and imported again) is replaced, so
   * the new copy is registered too; the catalog's constraints keep that from adding rows twice.
   */
  async enqueue(importJob: Job<ImportJobData>, lock: JobLock, path: string): Promise<void> {
    const on = this.settings.catalogRegistration !== null;
    const written = await this.records.writeLocked(importJob.id!, lock, {
      data: { catalog: { state: on ? 'pending' : 'off', accession: null, error: null } },
    });
    if (!written) throw new LockLostError(importJob.id!);
    if (!on) return;
    await queueRegistration(this.queue, this.settings, {
      import_id: importJob.id!,
      path,
      published_on: new Date().toISOString().slice(0, 10),
    });
  }
}

/**
 * Adds the registration job of an import, replacing one that already ended (completed or
 * failed): an unfinished one is left to run (BullMQ's add finds it by its id). Also how
 * `provisioner reregister` has an import record's registration told again.
 */
export async function queueRegistration(
  queue: Queue,
  settings: Pick<ProvisionerSettings, 'CATALOG_MAX_ATTEMPTS' | 'CATALOG_RETRY_DELAY_MS'>,
  data: StorageRegistrationJobData,
): Promise<void> {
  const jobId = storageRegistrationJobId(data.import_id);
  const previous = await queue.getJob(jobId);
  if (previous && ((await previous.isCompleted()) || (await previous.isFailed())))
    await previous.remove();
  await queue.add(StorageRegistrationJobName.Register, data, {
    jobId,
    ...storageRegistrationRetryPreset(
      settings.CATALOG_MAX_ATTEMPTS,
      settings.CATALOG_RETRY_DELAY_MS,
    ),
  });
}
