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

/** What reconciliation tells as it goes (the worker's metrics), and when to stop. */
export interface ReconciliationProgress {
  stagingRemoved(name: string): void;
  /** Datasets of one collection checked for their provenance, `missing` of them without it. */
  datasetsChecked(count: number, missing: number): void;
  /** Aborted: returns after the staging area or collection at hand (the worker is stopping). */
  signal?: AbortSignal;
}

/**
 * Job states after which an import runs again: its staging area holds what the next attempt
 * keeps (a job handed over by a stopping worker waits; one that failed an attempt is delayed).
 */
const WILL_RUN = new Set(['active', 'waiting', 'delayed', 'prioritized', 'waiting-children']);

/**
 * What a worker does when it starts, beside the jobs it takes: staging left by imports that will
 * not run again (finished, failed for good, removed) is removed (the only deletes, and only
 * inside .staging/); a published dataset without provenance is reported for a human, never
 * touched.
 */
export async function reconcileStorage(
  storage: StorageSystem,
  queue: Queue,
  progress?: ReconciliationProgress,
): Promise<ReconciliationReport> {
  const report: ReconciliationReport = {
    stagingRemoved: [],
    stagingKept: [],
    withoutProvenance: [],
  };
  // Listed before any state is read: an attempt that starts after this listing creates an area
  // with a new name (one per attempt), which this loop therefore never sees nor removes; one
  // that adopts a listed area renames it first (the removal then finds nothing, or the attempt
  // keeps only what is still there).
  const stopped = (): boolean => progress?.signal?.aborted ?? false;
  for (const name of await storage.listStaging()) {
    if (stopped()) return report;
    const job = await queue.getJob(importIdOfStaging(name));
    if (job && WILL_RUN.has(await job.getState())) {
      report.stagingKept.push(name);
      continue;
    }
    await storage.removeStaging(name);
    report.stagingRemoved.push(name);
    progress?.stagingRemoved(name);
  }
  for (const project of await storage.list('projects')) {
    for (const ref of await storage.list(`projects/${project}`)) {
      if (stopped()) return report;
      const raw = `projects/${project}/${ref}/data/raw`;
      const datasets = await storage.list(raw);
      const missing = await mapLimit(datasets, 16, async (id) =>
        (await storage.exists(`${raw}/${id}/${PROVENANCE_DIR}/${PROVENANCE_FILE}`))
          ? null
          : `${raw}/${id}`,
      );
      let without = 0;
      for (const path of missing) {
        if (path === null) continue;
        report.withoutProvenance.push(path);
        without += 1;
      }
      progress?.datasetsChecked(datasets.length, without);
    }
  }
  return report;
}
