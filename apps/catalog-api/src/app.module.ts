import { DynamicModule, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { AuthModule, BEARER_TOKEN_RESOLVER } from '@app/auth';
import { LoggingModule, MetricsModule } from '@app/platform';
import { catalogAuthFailureStore } from './auth/catalog-auth-failure-store';
import { CatalogKeyResolver } from './auth/catalog-key.resolver';
import { CatalogVersionModule } from './catalog-version/catalog-version.module';
import { CatalogIntegrationsModule } from './catalog-integrations.module';
import { CatalogReadModule } from './catalog-read.module';
import { CatalogWriteModule } from './catalog-write.module';
import { CatalogSettings } from './config/catalog.settings';
import { SettingsModule } from './config/settings.module';
import { DatabaseModule } from './database.module';
import { RepositoriesModule } from './repositories.module';
import { IdpBearerTokenResolver } from './identity/idp-bearer-token.resolver';
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
        RepositoriesModule,
        ScheduleModule.forRoot(),
        AuthModule.forRoot({
          resolver: CatalogKeyResolver,
          imports: [CatalogVersionModule],
          providers: [
            IdpBearerTokenResolver,
            { provide: BEARER_TOKEN_RESOLVER, useExisting: IdpBearerTokenResolver },
            catalogAuthFailureStore,
          ],
          throttle: settings.authThrottle,
        }),
        CatalogHealthModule,
        CatalogReadModule,
        TermsModule,
        CatalogWriteModule,
        CatalogIntegrationsModule,
      ],
    };
  }
}
