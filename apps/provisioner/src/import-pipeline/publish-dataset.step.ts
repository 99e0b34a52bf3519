import { formatManifest } from '../sources/source-system';
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
import { Provenance, ProvenanceFile, provenanceText } from '../storage/provenance';

/**
 * Step 4: writes .provisioner/ (the stored manifest and the provenance) into the staging area,
 * makes it durable, and publishes it with one rename, read-only, unless the source withdrew the
 * submission while the files were copied.
 */
export async function publishDataset(
  ctx: DatasetImportContext,
  resolved: ResolvedDataset,
  plan: ImportPlan,
  { results, kept }: StagedResults,
  staging: StagingArea,
  startedAt: Date,
): Promise<DatasetImportResult> {
  const { submission, target } = resolved;
  // Written from the plan and the results as they are: an import of many files holds them
  // once (the texts are measured, then written into buffers of their size).
  const file = (i: number): ProvenanceFile => ({
    path: plan.files[i].path,
    size: results[i].size,
    sha256: results[i].sha256,
    ...(results[i].md5 ? { md5: results[i].md5 } : {}),
  });
  await staging.writeSmallObject(
    `${PROVENANCE_DIR}/${STORED_MANIFEST_FILE}`,
    formatManifest(
      plan.files.map((f) => f.path),
      results.map((r) => r.sha256),
    ),
  );
  await staging.writeSmallObject(
    `${PROVENANCE_DIR}/${PROVENANCE_FILE}`,
    provenanceText(provenanceOf(ctx, resolved, plan, kept, startedAt), plan.files.length, file),
  );
  await staging.sync();
  ctx.phases?.lap('flush');
  const latest = await ctx.source.getSubmission(submission.ref);
  if (!latest?.eligible)
    throw new ImportRejectedError(
      'submission_withdrawn',
      `submission ${submission.ref} is no longer eligible (status "${latest?.status ?? 'gone'}")`,
    );
  await ctx.storage.publish(staging.id, target, { readOnly: true });
  ctx.phases?.lap('publish');
  return { path: target, files: plan.files.length, bytes: plan.bytesTotal, copied: true };
}

function provenanceOf(
  ctx: DatasetImportContext,
  { dataset, submission }: ResolvedDataset,
  plan: ImportPlan,
  kept: StagedResults['kept'],
  startedAt: Date,
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
    totals: { files: plan.files.length, bytes: plan.bytesTotal },
    verification: {
      result: 'passed',
      manifests: plan.algorithms,
      computed: plan.algorithms.includes('md5') ? ['sha256', 'md5'] : ['sha256'],
    },
  };
}
