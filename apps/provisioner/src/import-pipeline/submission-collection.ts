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
  const staging = await storage.openStaging(stagingId, path);
  try {
    const document = {
      source: { name: source.name, type: source.type },
      ref: submission.ref,
      fetched_at: now.toISOString(),
      submission: submission.raw,
    };
    await staging.writeSmallObject(SUBMISSION_FILE, `${JSON.stringify(document, null, 2)}\n`);
    await staging.createCollection('data/raw');
    await staging.sync();
    await storage.publish(stagingId, path, { readOnly: false });
    return { path, created: true };
  } catch (error) {
    if (error instanceof TargetExistsError) return { path, created: false };
    throw error;
  } finally {
    await storage.removeStaging(stagingId);
  }
}
