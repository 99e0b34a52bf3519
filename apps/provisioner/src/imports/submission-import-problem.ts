import { isSafeSegment } from '../sources/safe-segment';
import type { SourceSubmission } from '../sources/source-system';

export interface SubmissionProblem {
  reason: 'not_eligible' | 'unsafe_project';
  message: string;
}

/**
 * The checks that make a submission importable, shared by the API (409) and the worker
 * (rejected). Checked before any storage path is made of the project name.
 */
export function submissionImportProblem(submission: SourceSubmission): SubmissionProblem | null {
  if (!submission.eligible)
    return {
      reason: 'not_eligible',
      message: `submission ${submission.ref} is not eligible (status "${submission.status}")`,
    };
  if (!isSafeSegment(submission.project))
    return {
      reason: 'unsafe_project',
      message: `submission ${submission.ref} names no usable project (${JSON.stringify(
        String(submission.project).slice(0, 200),
      )} is not a single safe path segment)`,
    };
  return null;
}
