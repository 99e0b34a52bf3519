import { mapLimit } from '../common/map-limit';
import { SourceSubmission } from '../sources/source-system';
import { isSafeSegment } from '../sources/safe-segment';
import { collectionPath, rawPath } from './storage-layout';
import { StorageSystem } from './storage-system';

const LIST_CONCURRENCY = 16;

/**
 * What storage holds for a set of submissions, read with one listing per project and one per
 * existing collection: never one lookup per dataset, so diffs stay fast at 100,000 datasets.
 */
export class StorageIndex {
  private constructor(
    private readonly collections: Set<string>,
    private readonly datasets: Map<string, Set<string>>,
  ) {}

  static async build(
    storage: StorageSystem,
    submissions: SourceSubmission[],
    withDatasets: boolean,
  ): Promise<StorageIndex> {
    const usable = submissions.filter((s) => isSafeSegment(s.project));
    const projects = [...new Set(usable.map((s) => s.project))];
    const listed = await mapLimit(projects, LIST_CONCURRENCY, async (project) => ({
      project,
      refs: new Set(await storage.list(`projects/${project}`)),
    }));
    const refsByProject = new Map(listed.map((l) => [l.project, l.refs]));
    const present = usable.filter((s) => refsByProject.get(s.project)?.has(s.ref));
    const collections = new Set(present.map((s) => collectionPath(s.project, s.ref)));
    const datasets = new Map<string, Set<string>>();
    if (withDatasets) {
      await mapLimit(present, LIST_CONCURRENCY, async (s) => {
        datasets.set(
          collectionPath(s.project, s.ref),
          new Set(await storage.list(rawPath(s.project, s.ref))),
        );
      });
    }
    return new StorageIndex(collections, datasets);
  }

  hasCollection(submission: SourceSubmission): boolean {
    return this.collections.has(collectionPath(submission.project, submission.ref));
  }

  hasDataset(submission: SourceSubmission, datasetId: string): boolean {
    return (
      this.datasets.get(collectionPath(submission.project, submission.ref))?.has(datasetId) ?? false
    );
  }
}
