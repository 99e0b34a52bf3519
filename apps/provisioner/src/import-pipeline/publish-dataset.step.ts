import { formatManifest } from '../sources/dataset-directory/manifest';
import {
  PROVENANCE_DIR,
  PROVENANCE_FILE,
  STORED_MANIFEST_FILE,
} from '../storage/storage-layout';
import type { StagingArea } from '../storage/storage-system';
import type {
  DatasetImportContext,
  DatasetImportResult,
  ResolvedDataset,
} from './dataset-import-context';
import type { CopyResult } from './hashing-copy';
import { ImportRejectedError } from './import-errors';
import type { ImportPlan } from './preflight';
import type { Provenance, ProvenanceFile } from '../storage/provenance';

/**
 * Step 4: writes .provisioner/ (the stored manifest and the provenance) into the staging area,
 * makes it durable, and publishes it with one rename, read-only, unless the source withdrew the
 * submission while the files were copied.
 */
export async function publishDataset(
  ctx: DatasetImportContext,
  resolved: ResolvedDataset,
  plan: ImportPlan,
  results: readonly CopyResult[],
  staging: StagingArea,
  startedAt: Date,
): Promise<DatasetImportResult> {
  const { submission, target } = resolved;
  const files: ProvenanceFile[] = plan.files.map((file, i) => ({
    path: file.path,
    size: results[i].size,
    sha256: results[i].sha256,
    ...(results[i].md5 ? { md5: results[i].md5 } : {}),
  }));
  await staging.writeSmallObject(
    `${PROVENANCE_DIR}/${STORED_MANIFEST_FILE}`,
    formatManifest(files.map((f) => [f.path, f.sha256])),
  );
  await staging.writeSmallObject(
    `${PROVENANCE_DIR}/${PROVENANCE_FILE}`,
    `${JSON.stringify(provenanceOf(ctx, resolved, plan, files, startedAt), null, 2)}\n`,
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
  return { path: target, files: files.length, bytes: plan.bytesTotal, copied: true };
}

function provenanceOf(
  ctx: DatasetImportContext,
  { dataset, submission }: ResolvedDataset,
  plan: ImportPlan,
  files: ProvenanceFile[],
  startedAt: Date,
): Provenance {
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
    },
    versions: ctx.versions,
    totals: { files: files.length, bytes: plan.bytesTotal },
    verification: {
      result: 'passed',
      manifests: plan.algorithms,
      computed: plan.algorithms.includes('md5') ? ['sha256', 'md5'] : ['sha256'],
    },
    files,
  };
}
