import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { ConflictError } from '@app/errors';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { IdpSyncService } from './idp-sync.service';

/** Runs the synchronisation on IDP_SYNC_CRON (UTC); replicas skip a run another one holds. */
@Injectable()
export class IdpSyncScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger(IdpSyncScheduler.name);

  constructor(
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
    private readonly registry: SchedulerRegistry,
    private readonly sync: IdpSyncService,
  ) {}

  onApplicationBootstrap(): void {
    const cronTime = this.settings.IDP_SYNC_CRON.trim();
    if (cronTime === 'off') return;
    const job = CronJob.from({ cronTime, timeZone: 'UTC', start: true, onTick: () => this.tick() });
    this.registry.addCronJob('idp-sync', job);
  }

  async tick(): Promise<void> {
    try {
      await this.sync.run({ kind: 'system', name: 'scheduled identity-provider sync' });
    } catch (error) {
      if (error instanceof ConflictError) {
        this.logger.log('identity-provider synchronisation already running elsewhere; skipped');
      } else {
        this.logger.error({ err: error }, 'scheduled identity-provider synchronisation failed');
      }
    }
  }
}
