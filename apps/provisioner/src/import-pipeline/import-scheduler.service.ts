import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Queue } from 'bullmq';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';
import { ImportJobName, IMPORTS_QUEUE, SYNC_SCHEDULER_ID } from '../imports/import.queue';

/**
 * Registers (or removes) the BullMQ job scheduler of IMPORT_SCHEDULE. Upserting is idempotent,
 * so every worker replica can do it at start-up; the queue runs one sync per tick.
 */
@Injectable()
export class ImportSchedulerService implements OnApplicationBootstrap {
  private readonly logger = new Logger(ImportSchedulerService.name);

  constructor(
    @InjectQueue(IMPORTS_QUEUE) private readonly queue: Queue,
    @Inject(PROVISIONER_SETTINGS) private readonly settings: ProvisionerSettings,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const pattern = this.settings.IMPORT_SCHEDULE?.trim();
    if (!pattern) {
      await this.queue.removeJobScheduler(SYNC_SCHEDULER_ID);
      return;
    }
    await this.queue.upsertJobScheduler(
      SYNC_SCHEDULER_ID,
      { pattern },
      { name: ImportJobName.Sync, data: {}, opts: { removeOnComplete: 100, removeOnFail: 100 } },
    );
    this.logger.log(`scheduled import sync: ${pattern}`);
  }
}
