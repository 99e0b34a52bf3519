import type { Queue } from 'bullmq';
import { mapLimit } from '../common/map-limit';
import { PROVENANCE_DIR, PROVENANCE_FILE } from '../storage/storage-layout';
import { StorageSystem } from '../storage/storage-system';
import { importIdOfStaging } from './attempt-staging';

export interface ReconciliationReport {
  stagingRemoved: string[];
  stagingKept: string[];
  withoutProvenance: string[];
}

/**
 * What a worker does before it takes jobs: staging left by attempts that are no longer running
 * is removed (the only deletes, and only inside .staging/); a published dataset without
 * provenance is reported for a human, never touched.
 */
export async function reconcileStorage(
  storage: StorageSystem,
  queue: Queue,
): Promise<ReconciliationReport> {
  const report: ReconciliationReport = {
    stagingRemoved: [],
    stagingKept: [],
    withoutProvenance: [],
  };
  // Listed before any state is read: an attempt that starts after this listing creates an area
  // with a new name (one per attempt), which this loop therefore never sees nor removes.
  for (const name of await storage.listStaging()) {
    const job = await queue.getJob(importIdOfStaging(name));
    // An active job may belong to a live worker replica; its next attempt cleans up after itself.
    if (job && (await job.getState()) === 'active') {
      report.stagingKept.push(name);
      continue;
    }
    await storage.removeStaging(name);
    report.stagingRemoved.push(name);
  }
  for (const project of await storage.list('projects')) {
    for (const ref of await storage.list(`projects/${project}`)) {
      const raw = `projects/${project}/${ref}/data/raw`;
      const datasets = await storage.list(raw);
      const missing = await mapLimit(datasets, 16, async (id) =>
        (await storage.exists(`${raw}/${id}/${PROVENANCE_DIR}/${PROVENANCE_FILE}`))
          ? null
          : `${raw}/${id}`,
      );
      for (const path of missing) if (path !== null) report.withoutProvenance.push(path);
    }
  }
  return report;
}
