import { Global, Module } from '@nestjs/common';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';
import { DIRECT_WRITE_MIN_BYTES } from './filesystem/direct-object-writer';
import { FilesystemStorage } from './filesystem/filesystem-storage';

export const STORAGE_SYSTEM = Symbol('STORAGE_SYSTEM');

export function storageFromSettings(settings: ProvisionerSettings): FilesystemStorage {
  return new FilesystemStorage(settings.STORAGE_ROOT, {
    directWriteMinBytes: settings.IMPORT_DIRECT_WRITES ? DIRECT_WRITE_MIN_BYTES : undefined,
  });
}

/** The storage system (a filesystem under STORAGE_ROOT), shared by the API and the worker. */
@Global()
@Module({
  providers: [
    {
      provide: STORAGE_SYSTEM,
      inject: [PROVISIONER_SETTINGS],
      useFactory: storageFromSettings,
    },
  ],
  exports: [STORAGE_SYSTEM],
})
export class StorageModule {}
