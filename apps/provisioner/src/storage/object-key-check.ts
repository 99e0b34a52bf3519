import type { StorageSystem } from './storage-system';

/** Why one file of a dataset cannot be stored under its name: its object key is too long. */
export type ObjectKeyCheck = (relativePath: string) => string | null;

/**
 * The check of the files of the dataset at `datasetPath` against the store's limit on an
 * object's name (S3: the whole key, prefix and layout included, at most 1,024 UTF-8 bytes);
 * null where the store sets none. Cheap per path: most are measured by their length alone.
 */
export function objectKeyCheck(storage: StorageSystem, datasetPath: string): ObjectKeyCheck | null {
  const max = storage.maxKeyBytes;
  if (max === undefined || !storage.keyBytes) return null;
  const base = storage.keyBytes(`${datasetPath}/`);
  const left = max - base;
  return (path) => {
    // A UTF-16 unit is at most 3 bytes of UTF-8: a short path needs no counting.
    if (path.length * 3 <= left) return null;
    const bytes = Buffer.byteLength(path);
    return bytes > left
      ? `its object key would be ${base + bytes} bytes, over the ${max} the store allows`
      : null;
  };
}
