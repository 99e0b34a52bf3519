import { DynamicModule, Module } from '@nestjs/common';
import { AUTH_FAILURE_STORE, AuthModule } from '@app/auth';
import { LoggingModule, MetricsModule } from '@app/platform';
import { ProvisionerAuthFailuresStore } from './auth/provisioner-auth-failures.store';
import { ProvisionerKeyResolver } from './auth/provisioner-key.resolver';
import { ProvisionerSettings } from './config/provisioner.settings';
import { SettingsModule } from './config/settings.module';
import { ProvisionerHealthModule } from './health/provisioner-health.module';
import { DatasetsController } from './datasets/datasets.controller';
import { DatasetsService } from './datasets/datasets.service';
import { ImportRequestsService } from './imports/import-requests.service';
import { ImportsController } from './imports/imports.controller';
import { ImportsQueueService } from './imports/imports-queue.service';
import { ImportsService } from './imports/imports.service';
import { ProvisionerMetricsModule } from './metrics/provisioner-metrics.module';
import { QueueDashboardModule } from './queue-dashboard/queue-dashboard.module';
import { SourcesModule } from './sources/sources.module';
import { StorageModule } from './storage/storage.module';
import { SubmissionsController } from './submissions/submissions.controller';
import { SubmissionsService } from './submissions/submissions.service';
import { QueueBackendConfig } from './queue/queue-backend';
import { QueueModule } from './queue/queue.module';

/** The provisioner's HTTP API process: routes and producers, never a queue worker. */
@Module({})
export class ProvisionerApiModule {
  static forRoot(settings: ProvisionerSettings, backend: QueueBackendConfig): DynamicModule {
    return {
      module: ProvisionerApiModule,
      imports: [
        SettingsModule.forRoot(settings),
        LoggingModule.forRoot({ level: settings.LOG_LEVEL }),
        QueueModule.forRoot(backend),
        AuthModule.forRoot({
          resolver: ProvisionerKeyResolver,
          options: { writeDeniedMessage: 'Write operations require the provisioner write key' },
          providers: [
            ProvisionerAuthFailuresStore,
            { provide: AUTH_FAILURE_STORE, useExisting: ProvisionerAuthFailuresStore },
          ],
          throttle: settings.authThrottle,
        }),
        ProvisionerHealthModule,
        MetricsModule.forRoot({ app: 'provisioner-api' }),
        ProvisionerMetricsModule,
        QueueDashboardModule,
        SourcesModule,
        StorageModule,
      ],
      controllers: [SubmissionsController, DatasetsController, ImportsController],
      providers: [
        ImportsQueueService,
        ImportRequestsService,
        ImportsService,
        SubmissionsService,
        DatasetsService,
      ],
      exports: [ImportsQueueService],
    };
  }
}
