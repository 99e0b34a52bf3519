import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
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
    const cronTime = this.settings.ACCESS_EXPIRY_CRON.trim();
    if (cronTime === 'off') return;
    const job = CronJob.from({ cronTime, timeZone: 'UTC', start: true, onTick: () => this.tick() });
    this.registry.addCronJob('access-expiry', job);
  }

  async tick(): Promise<void> {
    try {
      await this.expiry.expire();
    } catch (error) {
      this.logger.error({ err: error }, 'scheduled access expiry failed');
    }
  }
}
