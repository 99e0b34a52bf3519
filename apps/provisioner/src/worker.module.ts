import { DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from '@app/auth';
import { LoggingModule, MetricsModule } from '@app/platform';
import { ProvisionerKeyResolver } from './auth/provisioner-key.resolver';
import { ProvisionerSettings } from './config/provisioner.settings';
import { SettingsModule } from './config/settings.module';
import { ProvisionerHealthModule } from './provisioner-health.module';
import { ImportQueueModule } from './import-queue.module';
import { ProvisionerMetricsModule } from './metrics/provisioner-metrics.module';
import { SourcesModule } from './sources/sources.module';
import { StorageModule } from './storage/storage.module';
import { QueueBackendConfig } from './queue/queue-backend';
import { QueueModule } from './queue/queue.module';

/** The worker process: runs the imports queue's jobs; its HTTP server serves only health and metrics. */
@Module({})
export class ProvisionerWorkerModule {
  static forRoot(settings: ProvisionerSettings, backend: QueueBackendConfig): DynamicModule {
    return {
      module: ProvisionerWorkerModule,
      imports: [
        SettingsModule.forRoot(settings),
        LoggingModule.forRoot({ level: settings.LOG_LEVEL }),
        QueueModule.forRoot(backend),
        ImportQueueModule.forWorker(settings),
        AuthModule.forRoot({ resolver: ProvisionerKeyResolver }),
        ProvisionerHealthModule,
        MetricsModule.forRoot({ app: 'provisioner-worker' }),
        ProvisionerMetricsModule,
        SourcesModule,
        StorageModule,
      ],
    };
  }
}
