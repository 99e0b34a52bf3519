import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { ConflictError } from '@app/errors';
import { scheduleUtcCron } from '../common/utc-cron';
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
    scheduleUtcCron(this.registry, 'idp-sync', this.settings.IDP_SYNC_CRON, () => this.tick());
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
