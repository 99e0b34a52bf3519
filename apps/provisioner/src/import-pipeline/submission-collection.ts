import { SourceSubmission, SourceSystem } from '../sources/source-system';
import { collectionPath, SUBMISSION_FILE } from '../storage/storage-layout';
import { StorageSystem, TargetExistsError } from '../storage/storage-system';
import { submissionImportProblem } from '../imports/submission-import-problem';
import { ImportRejectedError } from './import-errors';

export interface CollectionResult {
  path: string;
  created: boolean;
}

/**
 * Creates <root>/projects/<project>/<ref>/ with submission.json and data/raw/, built in
 * staging and published with one rename, so a half-made collection is never visible.
 * Finding it already there is success: the collection is the same whoever made it.
 */
export async function ensureSubmissionCollection(
  storage: StorageSystem,
  source: SourceSystem,
  submission: SourceSubmission,
  stagingId: string,
  now: Date,
): Promise<CollectionResult> {
  const problem = submissionImportProblem(submission);
  if (problem) throw new ImportRejectedError(problem.reason, problem.message);
  const path = collectionPath(submission.project, submission.ref);
  if (await storage.exists(path)) return { path, created: false };
  try {
    await writeCollection(storage, source, submission, stagingId, path, now);
  } catch (error) {
    await storage.removeStaging(stagingId);
    throw error;
  }
  return publishCollection(storage, stagingId, path);
}

/**
 * The submission's collection made in its staging area ahead of its publication: a dataset
 * import that stages while preflight checks (docs/decisions/collection-staged-while-checking.md)
 * writes it and makes it durable meanwhile, and publishes it only once every check has passed.
 */
export interface StagedCollection {
  /**
   * Once every check has passed: publishes the staged collection (or finds it there already), as
   * ensureSubmissionCollection would; where nothing was staged ahead (the collection existed, the
   * submission cannot be imported, staging failed), ensureSubmissionCollection itself, with its
   * answer or its error.
   */
  publish(): Promise<CollectionResult>;
  /**
   * When the attempt goes no further: waits until the staging ahead is over, then removes its
   * area (the next attempt stages its own). Never throws.
   */
  discard(): Promise<void>;
}

/**
 * Starts staging the collection at once (written, data/raw made and synced in its own private
 * area, nothing published), unless the submission cannot be imported or the collection exists.
 * The area is the attempt's own (`stagingId`), never adopted: publish or discard removes it (and,
 * after a worker's death, its import's next attempt: earlierDataAreas).
 */
export function stageSubmissionCollection(
  storage: StorageSystem,
  source: SourceSystem,
  submission: SourceSubmission,
  stagingId: string,
  now: Date,
): StagedCollection {
  const path = collectionPath(submission.project, submission.ref);
  const staged = (async (): Promise<boolean> => {
    if (submissionImportProblem(submission) || (await storage.exists(path))) return false;
    await writeCollection(storage, source, submission, stagingId, path, now);
    return true;
  })().catch(() => false);
  return {
    publish: async () => {
      if (await staged) return publishCollection(storage, stagingId, path);
      // Nothing staged ahead (or a failure doing so, which is not the import's): the collection
      // is made now, as it was before, in the same area (openStaging wipes what is left there).
      await storage.removeStaging(stagingId);
      return ensureSubmissionCollection(storage, source, submission, stagingId, now);
    },
    discard: async () => {
      await staged;
      await storage.removeStaging(stagingId).catch(() => undefined);
    },
  };
}

/** submission.json and data/raw/ written into a new staging area `stagingId`, made durable. */
async function writeCollection(
  storage: StorageSystem,
  source: SourceSystem,
  submission: SourceSubmission,
  stagingId: string,
  path: string,
  now: Date,
): Promise<void> {
  const staging = await storage.openStaging(stagingId, path);
  const document = {
    source: { name: source.name, type: source.type },
    ref: submission.ref,
    fetched_at: now.toISOString(),
    submission: submission.raw,
  };
  await staging.writeSmallObject(SUBMISSION_FILE, `${JSON.stringify(document, null, 2)}\n`);
  await staging.createCollection('data/raw');
  await staging.sync();
}

/** The staged collection published with one rename; finding it there already is success. */
async function publishCollection(
  storage: StorageSystem,
  stagingId: string,
  path: string,
): Promise<CollectionResult> {
  try {
    await storage.publish(stagingId, path, { readOnly: false });
    return { path, created: true };
  } catch (error) {
    if (error instanceof TargetExistsError) return { path, created: false };
    throw error;
  } finally {
    await storage.removeStaging(stagingId);
  }
}
