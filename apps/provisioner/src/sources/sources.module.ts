import { Global, Module, OnApplicationShutdown } from '@nestjs/common';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';
import { closeSourceScanner } from './dataset-directory/source-scanner';
import { SourceRegistry } from './source-registry';
import { SourcesService } from './sources.service';

/** The configured sources (SOURCES), shared by the API and the worker. */
@Global()
@Module({
  providers: [
    {
      provide: SourceRegistry,
      inject: [PROVISIONER_SETTINGS],
      useFactory: (settings: ProvisionerSettings) =>
        new SourceRegistry(
          settings.sources,
          settings.sourceLimits,
          {
            connectMs: settings.S3_CONNECT_TIMEOUT_MS,
            requestMs: settings.S3_REQUEST_TIMEOUT_MS,
            idleMs: settings.S3_IDLE_TIMEOUT_MS,
          },
          { rangeBytes: settings.S3_INBOX_RANGE_BYTES, ranges: settings.S3_INBOX_RANGES },
        ),
    },
    SourcesService,
  ],
  exports: [SourceRegistry, SourcesService],
})
export class SourcesModule implements OnApplicationShutdown {
  /** The scan thread never holds the process open; this ends it with the app (tests). */
  async onApplicationShutdown(): Promise<void> {
    await closeSourceScanner();
  }
}
