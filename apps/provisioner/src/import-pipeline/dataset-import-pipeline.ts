import { StagingArea, StorageRefusedError, TargetExistsError } from '../storage/storage-system';
import { attemptStagingId } from './attempt-staging';
import type {
  DatasetImportContext,
  DatasetImportResult,
  ResolvedDataset,
} from './dataset-import-context';
import { ImportRejectedError } from './import-errors';
import { publishDataset } from './publish-dataset.step';
import { planDataset, resolveDataset } from './resolve-dataset.step';
import { stageFiles } from './stage-files.step';
import { ensureSubmissionCollection } from './submission-collection';
import { verifyChecksums } from './verify-checksums.step';

/**
 * One dataset import, in four steps: resolve (what and where to, preflight of every file) ->
 * stage (hash while copying, fsync, stat before/after) -> verify against the manifests ->
 * publish (.provisioner/, then one rename, read-only). Throws ImportRejectedError for bad input
 * and anything else for faults worth a retry.
 */
export async function runDatasetImport(ctx: DatasetImportContext): Promise<DatasetImportResult> {
  try {
    return await importDataset(ctx);
  } catch (error) {
    // A store that refuses the credential or has no bucket: visible at once, not retried.
    if (error instanceof StorageRefusedError)
      throw new ImportRejectedError(error.code, error.message);
    throw error;
  }
}

async function importDataset(ctx: DatasetImportContext): Promise<DatasetImportResult> {
  const startedAt = new Date();
  const resolved = await resolveDataset(ctx);
  if ('alreadyPublished' in resolved) return resolved.alreadyPublished;
  const plan = await planDataset(ctx, resolved);
  try {
    await ensureSubmissionCollection(
      ctx.storage,
      ctx.source,
      resolved.submission,
      attemptStagingId(ctx.importId, 'collection', ctx.attempt),
      startedAt,
    );
    return await inStaging(ctx, resolved, async (staging) => {
      const results = await stageFiles(ctx, plan, staging);
      verifyChecksums(plan.files, results);
      ctx.phases?.lap('verify');
      return publishDataset(ctx, resolved, plan, results, staging, startedAt);
    });
  } finally {
    await plan.release();
  }
}

/** Runs `work` in this attempt's own staging area, which is removed when the work fails. */
async function inStaging(
  ctx: DatasetImportContext,
  { target }: ResolvedDataset,
  work: (staging: StagingArea) => Promise<DatasetImportResult>,
): Promise<DatasetImportResult> {
  const stagingId = attemptStagingId(ctx.importId, 'data', ctx.attempt);
  const staging = await ctx.storage.openStaging(stagingId, target);
  try {
    return await work(staging);
  } catch (error) {
    await ctx.storage.removeStaging(stagingId).catch(() => undefined);
    if (error instanceof TargetExistsError)
      throw new ImportRejectedError(
        'target_exists',
        `${target} appeared in storage during the import`,
      );
    throw error;
  }
}
