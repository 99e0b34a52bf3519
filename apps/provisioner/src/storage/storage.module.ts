import { Global, Module } from '@nestjs/common';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';
import { FilesystemStorage } from './filesystem/filesystem-storage';

export const STORAGE_SYSTEM = Symbol('STORAGE_SYSTEM');

/** The storage system (a filesystem under STORAGE_ROOT), shared by the API and the worker. */
@Global()
@Module({
  providers: [
    {
      provide: STORAGE_SYSTEM,
      inject: [PROVISIONER_SETTINGS],
      useFactory: (settings: ProvisionerSettings) => new FilesystemStorage(settings.STORAGE_ROOT),
    },
  ],
  exports: [STORAGE_SYSTEM],
})
export class StorageModule {}
