import { StagingArea, StorageRefusedError, TargetExistsError } from '../storage/storage-system';
import { attemptStagingId, removeStagingOfImport } from './attempt-staging';
import type {
  DatasetImportContext,
  DatasetImportResult,
  ResolvedDataset,
} from './dataset-import-context';
import { badInputRejection } from './fs-errors';
import { ImportRejectedError, ImportStoppedError } from './import-errors';
import { publishDataset } from './publish-dataset.step';
import { planDataset } from './preflight';
import { resolveDataset } from './resolve-dataset.step';
import { stageFiles } from './stage-files.step';
import { ensureSubmissionCollection } from './submission-collection';
import { verifyChecksums } from './verify-checksums.step';

/**
 * One dataset import, in four steps: resolve (what and where to, preflight of every file) ->
 * stage (keep what earlier attempts staged and is unchanged, hash while copying the rest, fsync,
 * stat before/after) -> verify against the manifests -> publish (.provisioner/, then one rename,
 * read-only). Throws ImportRejectedError for bad input, ImportStoppedError when ctx.signal stopped
 * it, and anything else for faults worth a retry. What a failed attempt staged stays for the next
 * one, unless the import is rejected or no attempt follows.
 */
export async function runDatasetImport(ctx: DatasetImportContext): Promise<DatasetImportResult> {
  try {
    return await importDataset(ctx);
  } catch (caught) {
    // A store that refuses the credential or has no bucket: visible at once, not retried.
    const error =
      caught instanceof StorageRefusedError
        ? new ImportRejectedError(caught.code, caught.message)
        : caught;
    const final =
      error instanceof ImportRejectedError ||
      badInputRejection(error) !== null ||
      (ctx.lastAttempt === true && !(error instanceof ImportStoppedError));
    if (final) await removeStagingOfImport(ctx.storage, ctx.importId).catch(() => undefined);
    throw error;
  }
}

/** Between steps: a stopping worker starts nothing new. */
function checkNotStopping(ctx: DatasetImportContext): void {
  if (ctx.signal?.aborted) throw new ImportStoppedError();
}

async function importDataset(ctx: DatasetImportContext): Promise<DatasetImportResult> {
  const startedAt = new Date();
  const resolved = await resolveDataset(ctx);
  if ('alreadyPublished' in resolved) return resolved.alreadyPublished;
  checkNotStopping(ctx);
  const plan = await planDataset(ctx, resolved);
  try {
    checkNotStopping(ctx);
    await ensureSubmissionCollection(
      ctx.storage,
      ctx.source,
      resolved.submission,
      attemptStagingId(ctx.importId, 'collection', ctx.attempt),
      startedAt,
    );
    return await inStaging(ctx, resolved, async (staging) => {
      const staged = await stageFiles(ctx, plan, staging);
      verifyChecksums(staged.mismatches);
      ctx.phases?.lap('verify');
      return publishDataset(ctx, resolved, plan, staged, staging, startedAt);
    });
  } finally {
    await plan.release();
  }
}

/**
 * Runs `work` in this attempt's own staging area, which adopts the areas of earlier attempts
 * (what they staged is kept where still valid); runDatasetImport removes it when the import
 * fails for good.
 */
async function inStaging(
  ctx: DatasetImportContext,
  { target, earlierAreas }: ResolvedDataset,
  work: (staging: StagingArea) => Promise<DatasetImportResult>,
): Promise<DatasetImportResult> {
  const stagingId = attemptStagingId(ctx.importId, 'data', ctx.attempt);
  const staging = await ctx.storage.openStaging(stagingId, target, { adopt: earlierAreas });
  try {
    return await work(staging);
  } catch (error) {
    if (error instanceof TargetExistsError)
      throw new ImportRejectedError(
        'target_exists',
        `${target} appeared in storage during the import`,
      );
    throw error;
  }
}
