import { BullModule } from '@nestjs/bullmq';
import { Global, Module } from '@nestjs/common';
import { STORAGE_REGISTRATION_QUEUE } from '../storage-registration/storage-registration.queue';
import { ImportMetrics } from './import-metrics.service';
import { QueueMetricsCollector } from './queue-metrics.service';
import { StorageMetricsCollector } from './storage-metrics.service';

/** The provisioner's metrics on top of the shared HTTP ones: queue depth, imports, storage space. */
@Global()
@Module({
  // The registration queue's depth is read in the API too, which otherwise only shows it.
  imports: [BullModule.registerQueue({ name: STORAGE_REGISTRATION_QUEUE })],
  providers: [ImportMetrics, QueueMetricsCollector, StorageMetricsCollector],
  exports: [ImportMetrics],
})
export class ProvisionerMetricsModule {}
