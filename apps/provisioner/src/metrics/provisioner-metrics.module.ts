import { Global, Module } from '@nestjs/common';
import { ImportMetrics } from './import-metrics.service';
import { QueueMetricsCollector } from './queue-metrics.service';

/** The provisioner's metrics on top of the shared HTTP ones: queue depth and imports. */
@Global()
@Module({
  providers: [ImportMetrics, QueueMetricsCollector],
  exports: [ImportMetrics],
})
export class ProvisionerMetricsModule {}
