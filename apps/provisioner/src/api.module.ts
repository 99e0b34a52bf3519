import { DynamicModule, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { AUTH_FAILURE_STORE, AuthModule } from '@app/auth';
import { LoggingModule, MetricsModule } from '@app/platform';
import { ArchiveModule } from './archive/archive.module';
import { ProvisionerAuthFailuresStore } from './auth/provisioner-auth-failures.service';
import { ProvisionerKeyResolver } from './auth/provisioner-key.resolver';
import { ProvisionerSettings } from './config/provisioner.settings';
import { SettingsModule } from './config/settings.module';
import { ProvisionerHealthModule } from './provisioner-health.module';
import { DatasetsModule } from './datasets/datasets.module';
import { ACCESS_URL_TOKENS } from './drs/access-urls';
import { DrsModule } from './drs/drs.module';
import { ImportQueueModule } from './import-queue.module';
import { ImportsModule } from './imports/imports.module';
import { ProvisionerMetricsModule } from './metrics/provisioner-metrics.module';
import { QueueDashboardModule } from './queue-dashboard/queue-dashboard.module';
import { SourcesModule } from './sources/sources.module';
import { StorageErrorsInterceptor } from './storage/storage-errors.interceptor';
import { StorageModule } from './storage/storage.module';
import { SubmissionsModule } from './submissions/submissions.module';
import { QueueBackendConfig } from './queue/queue-backend';
import { QueueModule } from './queue/queue.module';
import { TrailModule } from './trail/trail.module';

/** The provisioner's HTTP API process: the routes and the imports queue's producer, never a worker. */
@Module({})
export class ProvisionerApiModule {
  static forRoot(settings: ProvisionerSettings, backend: QueueBackendConfig): DynamicModule {
    return {
      module: ProvisionerApiModule,
      imports: [
        SettingsModule.forRoot(settings),
        LoggingModule.forRoot({ level: settings.LOG_LEVEL, urlTokens: ACCESS_URL_TOKENS }),
        QueueModule.forRoot(backend),
        ImportQueueModule.forApi(),
        // The DRS routes' decisions and reads go to the trail's outbox.
        TrailModule.forApi(),
        // Route modules before the others: routes (and the OpenAPI paths) keep their order.
        SubmissionsModule,
        DatasetsModule,
        ImportsModule,
        DrsModule,
        ArchiveModule,
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
      providers: [{ provide: APP_INTERCEPTOR, useClass: StorageErrorsInterceptor }],
    };
  }
}
