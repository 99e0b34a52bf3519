import { DynamicModule, Global, Module } from '@nestjs/common';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from './provisioner.settings';

/** Makes the validated settings injectable everywhere as `@Inject(PROVISIONER_SETTINGS)`. */
@Global()
@Module({})
export class SettingsModule {
  static forRoot(settings: ProvisionerSettings): DynamicModule {
    return {
      module: SettingsModule,
      providers: [{ provide: PROVISIONER_SETTINGS, useValue: settings }],
      exports: [PROVISIONER_SETTINGS],
    };
  }
}
