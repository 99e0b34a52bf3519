import { datasetPath, PROVENANCE_DIR, PROVENANCE_FILE } from '../storage/storage-layout';
import type { StorageSystem } from '../storage/storage-system';
import { earlierDataAreas, removeStagingOfImport } from './attempt-staging';
import type {
  DatasetImportContext,
  DatasetImportResult,
  ResolvedDataset,
} from './dataset-import-context';
import { ImportRejectedError } from './import-errors';
import { readProvenanceHead } from '../storage/provenance';
import { submissionImportProblem } from '../imports/submission-import-problem';

/** Not-ready reasons no preflight can add to: the import is refused on them at once. */
const REFUSED_BEFORE_PREFLIGHT = new Set([
  'submission_not_eligible',
  'not_delivered',
  'metadata_refused',
  'metadata_invalid',
]);

/**
 * Step 1: what to import and where to. Refuses a dataset the source no longer lists, one not
 * ready for a reason preflight cannot detail, an unsafe project name, and a target published by
 * another import; returns the earlier result when this very import already published it (a
 * re-run after a crash), clearing its staging. Otherwise finds the data staging areas of this
 * import's earlier attempts, for the stage step to adopt.
 */
export async function resolveDataset(
  ctx: DatasetImportContext,
): Promise<ResolvedDataset | { alreadyPublished: DatasetImportResult }> {
  // The payload is checked file by file in preflight: not read here a first time.
  const found = await ctx.source.findDataset(ctx.datasetId, { payload: 'none' });
  if (!found)
    throw new ImportRejectedError(
      'unknown_dataset',
      `source ${ctx.source.name} no longer lists dataset ${ctx.datasetId}`,
    );
  const { dataset, submission } = found;
  if (dataset.reason && REFUSED_BEFORE_PREFLIGHT.has(dataset.reason)) {
    const metadata = dataset.reason === 'metadata_refused' || dataset.reason === 'metadata_invalid';
    throw new ImportRejectedError(
      metadata ? dataset.reason : 'not_ready',
      `dataset ${ctx.datasetId} is not ready (${dataset.reason}${dataset.reasonDetail ? `: ${dataset.reasonDetail}` : ''})`,
      dataset.problems,
    );
  }
  // Before any path is made of the project name: it must be one safe segment.
  const problem = submissionImportProblem(submission);
  if (problem) throw new ImportRejectedError(problem.reason, problem.message);
  const target = datasetPath(submission.project, submission.ref, ctx.datasetId);
  const existing = await publishedBy(ctx.storage, target);
  // This attempt holds the import's job lock: earlier attempts are dead, and their staging is
  // either adopted by this one (below) or, when nothing is left to copy, garbage.
  if (existing !== null) await removeStagingOfImport(ctx.storage, ctx.importId);
  if (existing === ctx.importId) {
    const provenance = (await readProvenanceHead(
      ctx.storage,
      `${target}/${PROVENANCE_DIR}/${PROVENANCE_FILE}`,
    ))!;
    return {
      alreadyPublished: {
        path: target,
        files: provenance.totals.files,
        bytes: provenance.totals.bytes,
        copied: false,
      },
    };
  }
  if (existing !== null)
    throw new ImportRejectedError(
      'target_exists',
      `${target} already exists in storage and was not published by this import`,
    );
  return {
    dataset,
    submission,
    target,
    earlierAreas: await earlierDataAreas(ctx.storage, ctx.importId),
  };
}

/** The import id recorded in a published dataset, '' for a path without provenance, null when absent. */
async function publishedBy(storage: StorageSystem, target: string): Promise<string | null> {
  if (!(await storage.exists(target))) return null;
  const provenance = await readProvenanceHead(
    storage,
    `${target}/${PROVENANCE_DIR}/${PROVENANCE_FILE}`,
  );
  return provenance?.import.id ?? '';
}
