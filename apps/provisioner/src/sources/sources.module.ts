import { Global, Module } from '@nestjs/common';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';
import { SourceRegistry } from './source-registry';
import { SourcesService } from './sources.service';

/** The configured sources (SOURCES), shared by the API and the worker. */
@Global()
@Module({
  providers: [
    {
      provide: SourceRegistry,
      inject: [PROVISIONER_SETTINGS],
      useFactory: (settings: ProvisionerSettings) => new SourceRegistry(settings.sources),
    },
    SourcesService,
  ],
  exports: [SourceRegistry, SourcesService],
})
export class SourcesModule {}
