import { BullModule } from '@nestjs/bullmq';
import { Global, Module } from '@nestjs/common';
import { STORAGE_REGISTRATION_QUEUE } from '../storage-registration/storage-registration.queue';
import { TRAIL_QUEUE } from '../trail/trail.queue';
import { ImportMetrics } from './import-metrics.service';
import { QueueMetricsCollector } from './queue-metrics.service';
import { StorageMetricsCollector } from './storage-metrics.service';

/** The provisioner's metrics on top of the shared HTTP ones: queue depth, imports, storage space. */
@Global()
@Module({
  // The registration and trail queues' depths are read in the API too.
  imports: [
    BullModule.registerQueue({ name: STORAGE_REGISTRATION_QUEUE }),
    BullModule.registerQueue({ name: TRAIL_QUEUE }),
  ],
  providers: [ImportMetrics, QueueMetricsCollector, StorageMetricsCollector],
  exports: [ImportMetrics],
})
export class ProvisionerMetricsModule {}
