import type { StorageSystem } from '../../src/storage/storage-system';

/**
 * Counts the files `storage`'s staging areas have recorded for later attempts (each
 * StagingArea.record that resolved, so each record durable): how a test waits until an attempt
 * has recorded what it copied before stopping it. The storage and its areas do all the work;
 * only the count is added.
 */
export function countRecordedFiles(storage: StorageSystem): () => number {
  let recorded = 0;
  const open = storage.openStaging.bind(storage);
  storage.openStaging = async (...args) => {
    const area = await open(...args);
    const record = area.record.bind(area);
    area.record = async (files) => {
      await record(files);
      recorded += files.length;
    };
    return area;
  };
  return () => recorded;
}
