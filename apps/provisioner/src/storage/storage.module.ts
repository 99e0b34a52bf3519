import { Global, Logger, Module } from '@nestjs/common';
import type { HealthCheck } from '@app/platform';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';
import { DIRECT_WRITE_MIN_BYTES } from './filesystem/direct-object-writer';
import { FilesystemStorage } from './filesystem/filesystem-storage';
import { measureWritePaths, WRITE_PROBE, WritePathChoice } from './filesystem/write-path-probe';
import { createS3Client, s3StoreName } from '../common/s3/s3-client';
import { S3Storage } from './s3/s3-storage';
import type { StorageSystem } from './storage-system';
import { ARCHIVE_KEY, type ArchiveKey, loadArchiveKey } from './archive-key';
import { archiveStorage } from './archive-storage';
import { SealingThreads } from './sealing-threads';

export const STORAGE_SYSTEM = Symbol('STORAGE_SYSTEM');
/** The readiness checks of the store itself, where its backend has one (HealthCheck[]). */
export const STORAGE_HEALTH_CHECKS = Symbol('STORAGE_HEALTH_CHECKS');
/** The backend itself (a FilesystemStorage or an S3Storage), beneath archive mode's encryption. */
const STORAGE_BACKEND = Symbol('STORAGE_BACKEND');

/** The archive key in archive mode (STORAGE_ENCRYPTION=crypt4gh), else null. */
export function archiveKeyFromSettings(settings: ProvisionerSettings): Promise<ArchiveKey | null> {
  const files = settings.archiveKeyFiles;
  return files
    ? loadArchiveKey(files.keyFile, files.passphraseFile, files.previous)
    : Promise.resolve(null);
}

/** An S3 bucket must exist and admit the credential; a filesystem has nothing to ask. */
export function storageHealthChecks(storage: StorageSystem): HealthCheck[] {
  return storage instanceof S3Storage
    ? [{ name: 'storage', check: () => storage.checkReady() }]
    : [];
}

export function storageFromSettings(settings: ProvisionerSettings): StorageSystem {
  if (settings.STORAGE_BACKEND === 's3') return s3StorageFromSettings(settings);
  const directWrites = settings.IMPORT_DIRECT_WRITES;
  return new FilesystemStorage(settings.STORAGE_ROOT, {
    directWriteMinBytes: directWrites === false ? undefined : DIRECT_WRITE_MIN_BYTES,
    writePath: directWrites === 'auto' ? measuredWritePath(settings.copyThreads) : undefined,
  });
}

/**
 * IMPORT_DIRECT_WRITES=auto: the probe's figures and choice logged as the worker makes it. The
 * probe writes as many files at once as the worker has copy threads (one without threads).
 */
function measuredWritePath(copyThreads: number): WritePathChoice {
  const shape = { ...WRITE_PROBE, files: Math.max(1, copyThreads) };
  const logger = new Logger('FilesystemStorage');
  return new WritePathChoice(
    ({ direct, bytes, directMs, cachedMs, directRuns, cachedRuns }) =>
      logger.log(
        {
          direct,
          probe_bytes: bytes,
          direct_ms: directMs,
          cached_ms: cachedMs,
          direct_runs_ms: directRuns.map(Math.round),
          cached_runs_ms: cachedRuns.map(Math.round),
        },
        cachedMs === null
          ? 'write path not measured (no unnamed files on this filesystem): large files are written past the page cache where it allows'
          : direct
            ? 'large files are written past the page cache (measured as fast or faster)'
            : 'large files are written through the page cache (measured faster, or O_DIRECT refused)',
      ),
    (error) =>
      logger.warn(
        { error: error.message },
        'write path not measured: large files are written past the page cache meanwhile',
      ),
    (stagingRoot) => measureWritePaths(stagingRoot, shape),
  );
}

export function s3StorageFromSettings(settings: ProvisionerSettings): S3Storage {
  const client = createS3Client({
    endpoint: settings.S3_ENDPOINT,
    region: settings.S3_REGION,
    forcePathStyle: settings.S3_FORCE_PATH_STYLE,
    credentials:
      settings.S3_ACCESS_KEY_ID !== undefined && settings.S3_SECRET_ACCESS_KEY !== undefined
        ? {
            accessKeyId: settings.S3_ACCESS_KEY_ID,
            secretAccessKey: settings.S3_SECRET_ACCESS_KEY,
          }
        : undefined,
    timeouts: {
      connectMs: settings.S3_CONNECT_TIMEOUT_MS,
      requestMs: settings.S3_REQUEST_TIMEOUT_MS,
      idleMs: settings.S3_IDLE_TIMEOUT_MS,
    },
  });
  return new S3Storage(client, {
    bucket: settings.S3_BUCKET!,
    store: s3StoreName(settings.S3_ENDPOINT, settings.S3_REGION),
    prefix: settings.s3KeyPrefix,
    partBytes: settings.S3_PART_BYTES,
    uploadConcurrency: settings.S3_UPLOAD_CONCURRENCY,
  });
}

/**
 * The storage system (a filesystem under STORAGE_ROOT, or an S3 bucket), shared by the API and
 * the worker; in archive mode, encrypting what imports store (archive-storage.ts).
 */
@Global()
@Module({
  providers: [
    { provide: STORAGE_BACKEND, inject: [PROVISIONER_SETTINGS], useFactory: storageFromSettings },
    { provide: ARCHIVE_KEY, inject: [PROVISIONER_SETTINGS], useFactory: archiveKeyFromSettings },
    {
      provide: STORAGE_SYSTEM,
      inject: [STORAGE_BACKEND, ARCHIVE_KEY, SealingThreads],
      useFactory: (backend: StorageSystem, key: ArchiveKey | null, sealer: SealingThreads) =>
        key ? archiveStorage(backend, key, sealer.size > 0 ? sealer : undefined) : backend,
    },
    // Archive mode's large bodies are sealed on threads where the main thread would seal them
    // (S3, or no copy threads), as many as `sealingThreads`. Started when first needed, so a
    // process that imports nothing starts none.
    {
      provide: SealingThreads,
      inject: [PROVISIONER_SETTINGS],
      useFactory: (settings: ProvisionerSettings) => new SealingThreads(settings.sealingThreads),
    },
    { provide: STORAGE_HEALTH_CHECKS, inject: [STORAGE_BACKEND], useFactory: storageHealthChecks },
  ],
  exports: [STORAGE_SYSTEM, STORAGE_HEALTH_CHECKS, ARCHIVE_KEY],
})
export class StorageModule {}
