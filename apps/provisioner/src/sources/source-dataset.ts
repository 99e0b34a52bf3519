import { DirectoryInspection } from './dataset-directory/dataset-directory';
import { SourceDataset, SourceSubmission } from './source-system';

/** A dataset as a source reports it: its directory's inspection, gated by its submission. */
export function datasetFromInspection(
  datasetId: string,
  submission: SourceSubmission,
  inspection: DirectoryInspection,
  described: { title: string; declaredBytes: number | null; metadata: unknown },
): SourceDataset {
  const eligible = submission.eligible;
  return {
    datasetId,
    submissionRef: submission.ref,
    title: described.title,
    fileCount: inspection.fileCount,
    byteSize: inspection.byteSize ?? described.declaredBytes,
    ready: inspection.ready && eligible,
    reason: eligible ? inspection.reason : 'submission_not_eligible',
    reasonDetail: eligible
      ? inspection.reasonDetail
      : `submission status is "${submission.status}"`,
    metadata: described.metadata,
  };
}
