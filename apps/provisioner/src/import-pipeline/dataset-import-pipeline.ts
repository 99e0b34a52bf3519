import { StagingArea, StorageRefusedError, TargetExistsError } from '../storage/storage-system';
import type { ProvenanceValidator } from '../storage/provenance';
import { attemptStagingId, removeStagingOfImport } from './attempt-staging';
import type {
  DatasetImportContext,
  DatasetImportResult,
  ResolvedDataset,
} from './dataset-import-context';
import { badInputRejection } from './fs-errors';
import { ImportRejectedError, ImportStoppedError } from './import-errors';
import { ImportTimeline } from './import-steps';
import { flushDataset, publishDataset } from './publish-dataset.step';
import { planDataset } from './preflight';
import { resolveDataset } from './resolve-dataset.step';
import { stageFiles } from './stage-files.step';
import { ensureSubmissionCollection } from './submission-collection';
import { validateDataset } from './validate-dataset.step';
import { verifyChecksums } from './verify-checksums.step';

/**
 * One dataset import, in six steps (seven with validators), each run through the attempt's
 * timeline (ImportTimeline: a span, the step histogram, the log line): resolve (what and where
 * to) -> plan (preflight of every file) -> stage (keep what earlier attempts staged and is
 * unchanged, hash while copying the rest) -> verify against the manifests -> validate (the
 * source's validators, if any, on the staged files) -> flush (.provisioner/ written, the area durable)
 * -> publish (one rename, read-only). Throws ImportRejectedError for bad input, ImportStoppedError when ctx.signal stopped
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
  const steps = ctx.timeline ?? new ImportTimeline();
  const resolved = await steps.run('resolve', () => resolveDataset(ctx));
  if ('alreadyPublished' in resolved) return resolved.alreadyPublished;
  checkNotStopping(ctx);
  const plan = await steps.run('plan', () => planDataset(ctx, resolved));
  try {
    checkNotStopping(ctx);
    const { staging, staged } = await steps.run('stage', async () => {
      await ensureSubmissionCollection(
        ctx.storage,
        ctx.source,
        resolved.submission,
        attemptStagingId(ctx.importId, 'collection', ctx.attempt),
        startedAt,
      );
      const area = await openStaging(ctx, resolved);
      return { staging: area, staged: await stageFiles(ctx, plan, area) };
    });
    await steps.run('verify', () => verifyChecksums(staged.mismatches));
    let validated: ProvenanceValidator[] = [];
    if (ctx.validators?.length) {
      checkNotStopping(ctx);
      validated = await steps.run('validate', () => validateDataset(ctx, plan, staging));
    }
    await steps.run('flush', () =>
      flushDataset(ctx, resolved, plan, staged, staging, startedAt, validated),
    );
    return await steps.run('publish', () => publishDataset(ctx, resolved, plan, staging));
  } catch (error) {
    // The submission's collection is made whether or not another import made it first; the
    // dataset's own path appearing meanwhile is a rejection.
    if (error instanceof TargetExistsError)
      throw new ImportRejectedError(
        'target_exists',
        `${resolved.target} appeared in storage during the import`,
      );
    throw error;
  } finally {
    await plan.release();
  }
}

/**
 * This attempt's own staging area, which adopts the areas of earlier attempts (what they staged
 * is kept where still valid); runDatasetImport removes it when the import fails for good.
 */
function openStaging(
  ctx: DatasetImportContext,
  { target, earlierAreas }: ResolvedDataset,
): Promise<StagingArea> {
  const stagingId = attemptStagingId(ctx.importId, 'data', ctx.attempt);
  return ctx.storage.openStaging(stagingId, target, { adopt: earlierAreas });
}
