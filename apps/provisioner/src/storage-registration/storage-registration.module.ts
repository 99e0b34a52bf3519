import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import type { ProvisionerSettings } from '../config/provisioner.settings';
import { CatalogClient } from '../catalog-client/catalog.client';
import { StorageRegistrationMetrics } from './storage-registration-metrics.service';
import {
  StorageRegistrationProcessor,
  configureStorageRegistrationProcessor,
} from './storage-registration.processor';
import { StorageRegistrationProducer } from './storage-registration.producer';
import { STORAGE_REGISTRATION_QUEUE } from './storage-registration.queue';

/** The outbox of registrations in the catalog: its queue, producer and (worker) processor. */
@Module({})
export class StorageRegistrationModule {
  static forWorker(settings: ProvisionerSettings): DynamicModule {
    configureStorageRegistrationProcessor(settings);
    return {
      module: StorageRegistrationModule,
      imports: [BullModule.registerQueue({ name: STORAGE_REGISTRATION_QUEUE })],
      providers: [
        CatalogClient,
        StorageRegistrationMetrics,
        StorageRegistrationProducer,
        StorageRegistrationProcessor,
      ],
      exports: [StorageRegistrationProducer],
    };
  }
}
