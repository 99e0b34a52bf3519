import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { scheduleUtcCron } from '../common/utc-cron';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { AccessExpiryService } from './access-expiry.service';

/** Terminates expired accesses on ACCESS_EXPIRY_CRON (UTC; daily by default). */
@Injectable()
export class AccessExpiryScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger(AccessExpiryScheduler.name);

  constructor(
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
    private readonly registry: SchedulerRegistry,
    private readonly expiry: AccessExpiryService,
  ) {}

  onApplicationBootstrap(): void {
    scheduleUtcCron(this.registry, 'access-expiry', this.settings.ACCESS_EXPIRY_CRON, () =>
      this.tick(),
    );
  }

  async tick(): Promise<void> {
    try {
      await this.expiry.expire();
    } catch (error) {
      this.logger.error({ err: error }, 'scheduled access expiry failed');
    }
  }
}
