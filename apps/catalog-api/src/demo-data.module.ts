import { DynamicModule, Module } from '@nestjs/common';
import { MetricsModule } from '@app/platform';
import { AdminModule } from './admin/admin.module';
import { CatalogSettings } from './config/catalog.settings';
import { SettingsModule } from './config/settings.module';
import { DatabaseModule } from './database.module';
import { RepositoriesModule } from './repositories.module';
import { ImportsModule } from './catalog-imports/imports.module';

/**
 * The catalog services the demo loader writes through (imports, administration, vocabularies),
 * without the rest of the app: `npm run demo-data` runs before every `npm start`, and booting
 * only these keeps it as quick as loading through the ORM was.
 */
@Module({})
export class DemoDataModule {
  static forRoot(settings: CatalogSettings): DynamicModule {
    return {
      module: DemoDataModule,
      imports: [
        SettingsModule.forRoot(settings),
        // The term vocabularies' module brings the read cache, which registers its metrics.
        MetricsModule.forRoot({ app: 'catalog-api' }),
        DatabaseModule,
        RepositoriesModule,
        ImportsModule,
        AdminModule,
      ],
    };
  }
}
