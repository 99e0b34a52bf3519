import { byteChunks } from '../common/byte-chunks';
import { PROVENANCE_DIR, PROVENANCE_FILE, STORED_MANIFEST_FILE } from '../storage/storage-layout';
import type { StagingArea } from '../storage/storage-system';
import type {
  DatasetImportContext,
  DatasetImportResult,
  ResolvedDataset,
} from './dataset-import-context';
import { ImportRejectedError } from './import-errors';
import type { ImportPlan } from './preflight';
import type { StagedResults } from './stage-files.step';
import { Provenance, provenanceChunks, type ProvenanceValidator } from '../storage/provenance';
import { provenanceFileEntries, storedManifestLines } from './published-lists';

/**
 * The flush step: writes .provisioner/ (the stored manifest and the provenance) into the staging
 * area and makes the area durable.
 */
export async function flushDataset(
  ctx: DatasetImportContext,
  resolved: ResolvedDataset,
  plan: ImportPlan,
  { kept }: StagedResults,
  staging: StagingArea,
  startedAt: Date,
  validated: ProvenanceValidator[] = [],
): Promise<void> {
  // Written from the plan's columns in pieces: an import of a million files never holds
  // either text whole (a copied file's checksums are the manifests', checked as it ended).
  const { files } = plan;
  // Archive mode: encrypted deposits are listed under the names they are stored under.
  const rewrapped = ctx.storage.encryption !== undefined;
  await staging.writeSmallObject(
    `${PROVENANCE_DIR}/${STORED_MANIFEST_FILE}`,
    byteChunks(files.sortedByPath(), storedManifestLines(files, rewrapped)),
  );
  await staging.writeSmallObject(
    `${PROVENANCE_DIR}/${PROVENANCE_FILE}`,
    provenanceChunks(
      provenanceOf(ctx, resolved, plan, kept, startedAt, validated),
      files.count,
      provenanceFileEntries(files, plan.algorithms.includes('md5'), rewrapped),
    ),
  );
  await staging.sync();
}

/**
 * The publish step: publishes the flushed area with one rename, read-only, unless the source
 * withdrew the submission while the files were copied.
 */
export async function publishDataset(
  ctx: DatasetImportContext,
  { submission, target }: ResolvedDataset,
  plan: ImportPlan,
  staging: StagingArea,
): Promise<DatasetImportResult> {
  const latest = await ctx.source.getSubmission(submission.ref);
  if (!latest?.eligible)
    throw new ImportRejectedError(
      'submission_withdrawn',
      `submission ${submission.ref} is no longer eligible (status "${latest?.status ?? 'gone'}")`,
    );
  await ctx.storage.publish(staging.id, target, { readOnly: true });
  return { path: target, files: plan.files.count, bytes: plan.bytesTotal, copied: true };
}

function provenanceOf(
  ctx: DatasetImportContext,
  { dataset, submission }: ResolvedDataset,
  plan: ImportPlan,
  kept: StagedResults['kept'],
  startedAt: Date,
  validated: ProvenanceValidator[],
): Omit<Provenance, 'files'> {
  return {
    format: 'provisioner-provenance/1',
    source: { name: ctx.source.name, type: ctx.source.type },
    submission: { ref: submission.ref, project: submission.project },
    dataset: { dataset_id: ctx.datasetId, title: dataset.title, metadata: dataset.metadata },
    import: {
      id: ctx.importId,
      attempt: ctx.attempt,
      queued_at: ctx.queuedAt?.toISOString() ?? null,
      started_at: startedAt.toISOString(),
      staged_at: new Date().toISOString(),
      kept_from_earlier_attempts: kept,
    },
    versions: ctx.versions,
    totals: { files: plan.files.count, bytes: plan.bytesTotal },
    ...(ctx.storage.encryption ? { encryption: ctx.storage.encryption } : {}),
    verification: {
      result: 'passed',
      manifests: plan.algorithms,
      computed: plan.algorithms.includes('md5') ? ['sha256', 'md5'] : ['sha256'],
    },
    ...(validated.length > 0 ? { validation: { validators: validated } } : {}),
  };
}
