import { DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from '@app/auth';
import { LoggingModule, MetricsModule } from '@app/platform';
import { CatalogKeyResolver } from './auth/catalog-key.resolver';
import { CatalogReadModule } from './catalog-read.module';
import { CatalogWriteModule } from './catalog-write.module';
import { CatalogSettings } from './config/catalog.settings';
import { SettingsModule } from './config/settings.module';
import { DatabaseModule } from './database/database.module';
import { CatalogHealthModule } from './health/catalog-health.module';
import { TermsModule } from './terms/terms.module';

@Module({})
export class CatalogAppModule {
  static forRoot(settings: CatalogSettings): DynamicModule {
    return {
      module: CatalogAppModule,
      imports: [
        SettingsModule.forRoot(settings),
        LoggingModule.forRoot({ level: settings.LOG_LEVEL }),
        MetricsModule.forRoot({ app: 'catalog-api' }),
        DatabaseModule,
        AuthModule.forRoot({ resolver: CatalogKeyResolver }),
        CatalogHealthModule,
        CatalogReadModule,
        TermsModule,
        CatalogWriteModule,
      ],
    };
  }
}
