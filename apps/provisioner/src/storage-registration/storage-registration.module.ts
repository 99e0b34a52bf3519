import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import type { ProvisionerSettings } from '../config/provisioner.settings';
import { CatalogClient } from './catalog.client';
import { CatalogRegistrationMetrics } from './storage-registration-metrics.service';
import {
  CatalogRegistrationProcessor,
  configureCatalogRegistrationProcessor,
} from './storage-registration.processor';
import { CatalogRegistrationProducer } from './storage-registration.producer';
import { CATALOG_REGISTRATION_QUEUE } from './storage-registration.queue';

/** The outbox of registrations in the catalog: its queue, producer and (worker) processor. */
@Module({})
export class CatalogRegistrationModule {
  static forWorker(settings: ProvisionerSettings): DynamicModule {
    configureCatalogRegistrationProcessor(settings);
    return {
      module: CatalogRegistrationModule,
      imports: [BullModule.registerQueue({ name: CATALOG_REGISTRATION_QUEUE })],
      providers: [
        CatalogClient,
        CatalogRegistrationMetrics,
        CatalogRegistrationProducer,
        CatalogRegistrationProcessor,
      ],
      exports: [CatalogRegistrationProducer],
    };
  }
}
