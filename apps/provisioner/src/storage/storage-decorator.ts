import type { StorageSystem } from './storage-system';

/** T with every member required to be named, optional ones as possibly undefined. */
export type Complete<T> = { [K in keyof Required<T>]: T[K] };

/** The members of a StorageSystem that only read, passed on to `storage` unchanged. */
export type StorageReads = Pick<
  Complete<StorageSystem>,
  | 'description'
  | 'encryption'
  | 'keyBytes'
  | 'location'
  | 'exists'
  | 'list'
  | 'readObject'
  | 'listStaging'
  | 'freeBytes'
  | 'byteSource'
>;

/**
 * What a storage that wraps another (leased-storage.ts, archive-storage.ts) passes on as it is:
 * each wrapper names every other member itself (Complete), so a member added to StorageSystem
 * and not passed on is a compile error, not a facet silently lost.
 */
export function storageReads(storage: StorageSystem): StorageReads {
  return {
    description: storage.description,
    encryption: storage.encryption,
    keyBytes: storage.keyBytes && ((path) => storage.keyBytes!(path)),
    location: (path) => storage.location(path),
    exists: (path) => storage.exists(path),
    list: (path) => storage.list(path),
    readObject: (path, range) => storage.readObject(path, range),
    listStaging: () => storage.listStaging(),
    freeBytes: () => storage.freeBytes(),
    byteSource: (path, seconds) => storage.byteSource(path, seconds),
  };
}
