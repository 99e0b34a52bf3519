import { DynamicModule, Global, Module } from '@nestjs/common';
import { CATALOG_SETTINGS, CatalogSettings } from './catalog.settings';

/** Makes the validated settings injectable everywhere as `@Inject(CATALOG_SETTINGS)`. */
@Global()
@Module({})
export class SettingsModule {
  static forRoot(settings: CatalogSettings): DynamicModule {
    return {
      module: SettingsModule,
      providers: [{ provide: CATALOG_SETTINGS, useValue: settings }],
      exports: [CATALOG_SETTINGS],
    };
  }
}
