import { DirectoryInspection } from './dataset-directory/dataset-directory';
import { SourceProblem } from './dataset-directory/source-file';
import { DatasetNotReadyReason, SourceDataset, SourceSubmission } from './source-system';

/**
 * Reasons that a problem with dataset.json (metadata_invalid) takes precedence over: they
 * concern the files, which matter only once it is clear whose dataset this is. Not over
 * not_delivered, metadata_refused or marker_missing: the delivery is absent, unusable or not
 * finished yet.
 */
const AFTER_METADATA: (DatasetNotReadyReason | null)[] = [
  null,
  'manifest_missing',
  'manifest_invalid',
  'files_missing',
];

/**
 * A dataset as a source reports it: its directory's inspection, gated by its submission and,
 * with `invalid`, by a problem with its metadata (dataset.json naming another submission).
 */
export function datasetFromInspection(
  datasetId: string,
  submission: SourceSubmission,
  inspection: DirectoryInspection,
  described: {
    title: string;
    declaredBytes: number | null;
    metadata: unknown;
    invalid?: SourceProblem | null;
  },
): SourceDataset {
  const base = {
    datasetId,
    submissionRef: submission.ref,
    title: described.title,
    fileCount: inspection.fileCount,
    byteSize: inspection.byteSize ?? described.declaredBytes,
    directoryIdentity: inspection.identity,
    metadata: described.metadata,
    ...(inspection.longestPaths ? { longestPaths: inspection.longestPaths } : {}),
  };
  if (!submission.eligible)
    return {
      ...base,
      ready: false,
      reason: 'submission_not_eligible',
      reasonDetail: `submission status is "${submission.status}"`,
      problems: [],
    };
  if (described.invalid && AFTER_METADATA.includes(inspection.reason))
    return {
      ...base,
      ready: false,
      reason: 'metadata_invalid',
      reasonDetail: described.invalid.message,
      problems: [described.invalid],
    };
  return {
    ...base,
    ready: inspection.ready,
    reason: inspection.reason,
    reasonDetail: inspection.reasonDetail,
    problems: inspection.problems,
  };
}
