import { StagingArea, StorageRefusedError, TargetExistsError } from '../storage/storage-system';
import type { ProvenanceValidator } from '../storage/provenance';
import { attemptStagingId, removeStagingOfImport } from './attempt-staging';
import type {
  DatasetImportContext,
  DatasetImportResult,
  ResolvedDataset,
} from './dataset-import-context';
import { badInputRejection } from './fs-errors';
import { ImportRejectedError, ImportStoppedError, ImportTransientError } from './import-errors';
import { ImportTimeline } from './import-steps';
import { flushDataset, publishDataset } from './publish-dataset.step';
import { planDataset } from './preflight';
import { resolveDataset } from './resolve-dataset.step';
import {
  checkDepositNames,
  stageFiles,
  stageWalkedFiles,
  type StagedResults,
} from './stage-files.step';
import { ensureSubmissionCollection, stageSubmissionCollection } from './submission-collection';
import { validateDataset } from './validate-dataset.step';
import { verifyChecksums } from './verify-checksums.step';
import { WalkedFeed } from './walked-feed';
import type { ImportPlan } from './preflight';

/**
 * One dataset import, in six steps (seven with validators), each run through the attempt's
 * timeline (ImportTimeline: a span, the step histogram, the log line): resolve (what and where
 * to) -> plan (preflight of every file) -> stage (keep what earlier attempts staged and is
 * unchanged, hash while copying the rest; on a first attempt on the copy threads, while plan
 * runs: importWhileChecking) -> verify against the manifests -> validate (the
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
  if (stagesWhileChecking(ctx, resolved)) {
    const area = await openStaging(ctx, resolved);
    if (area.localFiles ?? area.encryptedLocalFiles)
      return importWhileChecking(ctx, resolved, steps, startedAt, area);
    return importInOrder(ctx, resolved, steps, startedAt, area);
  }
  return importInOrder(ctx, resolved, steps, startedAt);
}

/**
 * The contract's order: every check, then the collection, then staging (into `opened`, an area
 * opened already, where given: on S3 it holds nothing before the copy, which writes the files
 * at their final keys, under a collection that must be made first).
 */
async function importInOrder(
  ctx: DatasetImportContext,
  resolved: ResolvedDataset,
  steps: ImportTimeline,
  startedAt: Date,
  opened?: StagingArea,
): Promise<DatasetImportResult> {
  const plan = await steps.run('plan', () => planDataset(ctx, resolved));
  try {
    checkDepositNames(ctx, plan);
    checkNotStopping(ctx);
    const { staging, staged } = await steps.run('stage', async () => {
      await ensureCollection(ctx, resolved, startedAt);
      const area = opened ?? (await openStaging(ctx, resolved));
      return { staging: area, staged: await stageFiles(ctx, plan, area) };
    });
    return await finishImport(ctx, resolved, steps, startedAt, plan, staging, staged);
  } catch (error) {
    throw targetAppeared(error, resolved);
  } finally {
    await plan.release();
  }
}

/**
 * Whether this attempt may stage while preflight runs (docs/decisions/stage-while-checking.md): a
 * first attempt (nothing to adopt, whose reuse needs every file's walk first) of a dataset in a
 * directory, copied on the copy threads; it does where its staging area's objects are files on
 * this host (plain, or encrypted there in archive mode).
 */
function stagesWhileChecking(ctx: DatasetImportContext, resolved: ResolvedDataset): boolean {
  return (
    resolved.earlierAreas.length === 0 &&
    (ctx.copyPool?.size ?? 0) > 0 &&
    ctx.source.remoteDataset === undefined
  );
}

/**
 * Plan and stage at once: the area is opened first (private: nobody sees it), each file is
 * copied as soon as preflight's walk has vetted it, and the checks run meanwhile. Nothing past
 * the area happens before every check has passed: the collection is made, the checksums
 * verified and the area published only then (the collection is staged meanwhile, in its own
 * private area, and published then). When preflight fails, its verdict is the
 * attempt's (a refusal lists every problem, as before), the copies in flight end first, and
 * runDatasetImport removes what was staged.
 */
async function importWhileChecking(
  ctx: DatasetImportContext,
  resolved: ResolvedDataset,
  steps: ImportTimeline,
  startedAt: Date,
  staging: StagingArea,
): Promise<DatasetImportResult> {
  const feed = new WalkedFeed();
  const planning = steps
    .run('plan', () => planDataset(ctx, resolved, feed))
    .then(
      (plan) => ({ plan }),
      (error: unknown) => {
        feed.halt();
        return { error };
      },
    );
  const copying = steps
    .run('stage', () => stageWalkedFiles(ctx, feed, staging))
    .then(
      (staged) => ({ staged }),
      (error: unknown) => ({ error }),
    );
  // The submission's collection is written and made durable in its own area meanwhile, and
  // published only once every check has passed (docs/decisions/collection-staged-while-checking.md).
  const collection = stageSubmissionCollection(
    ctx.storage,
    ctx.source,
    resolved.submission,
    attemptStagingId(ctx.importId, 'collection', ctx.attempt),
    startedAt,
  );
  const [planned, stagedOrNot] = await Promise.all([planning, copying]);
  if ('error' in planned) {
    // Not published: removed once nothing writes into it any more.
    await collection.discard();
    throw planned.error;
  }
  const { plan } = planned;
  try {
    if ('error' in stagedOrNot) throw stagedOrNot.error;
    const { staged } = stagedOrNot;
    if (!staged) throw new Error('a staging area with local files staged nothing');
    // Deposits re-wrapped in archive mode (once the walk was summed) are sized as plain-text now.
    if (ctx.storage.encryption !== undefined) plan.bytesTotal = plannedBytes(plan);
    checkNotStopping(ctx);
    // Free space ran short of the payload while the walk went on, and came back by its end:
    // the next attempt keeps what was staged and copies the rest after its checks.
    if (feed.pushedFiles !== plan.files.count)
      throw new ImportTransientError(
        'insufficient_space',
        `staged ${feed.pushedFiles} of ${plan.files.count} files while the walk went on, as storage had room for no more then`,
      );
    await steps.run('stage', () => collection.publish());
    return await finishImport(ctx, resolved, steps, startedAt, plan, staging, staged);
  } catch (error) {
    await collection.discard();
    throw targetAppeared(error, resolved);
  } finally {
    await plan.release();
  }
}

/** The submission's collection, made (or found) once the dataset's checks have passed. */
async function ensureCollection(
  ctx: DatasetImportContext,
  resolved: ResolvedDataset,
  startedAt: Date,
): Promise<void> {
  await ensureSubmissionCollection(
    ctx.storage,
    ctx.source,
    resolved.submission,
    attemptStagingId(ctx.importId, 'collection', ctx.attempt),
    startedAt,
  );
}

/**
 * The submission's collection is made whether or not another import made it first; the
 * dataset's own path appearing meanwhile is a rejection.
 */
function targetAppeared(error: unknown, resolved: ResolvedDataset): unknown {
  if (error instanceof TargetExistsError)
    return new ImportRejectedError(
      'target_exists',
      `${resolved.target} appeared in storage during the import`,
    );
  return error;
}

/** Verify, validate, flush and publish a staged plan. */
async function finishImport(
  ctx: DatasetImportContext,
  resolved: ResolvedDataset,
  steps: ImportTimeline,
  startedAt: Date,
  plan: ImportPlan,
  staging: StagingArea,
  staged: StagedResults,
): Promise<DatasetImportResult> {
  await steps.run('verify', () => verifyChecksums(staged.mismatches));
  let validated: ProvenanceValidator[] = [];
  if (ctx.validators?.length) {
    checkNotStopping(ctx);
    validated = await steps.run('validate', () => validateDataset(ctx, plan, staging));
  }
  await steps.run('flush', () =>
    flushDataset(ctx, resolved, plan, staged, staging, startedAt, validated),
  );
  return steps.run('publish', () => publishDataset(ctx, resolved, plan, staging));
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

/** The bytes of every planned file, as the plan sizes them now. */
function plannedBytes({ files }: ImportPlan): number {
  let total = 0;
  for (let i = 0; i < files.count; i++) total += files.size[i];
  return total;
}
