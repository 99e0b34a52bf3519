import type { CopyResult } from './hashing-copy';
import { ImportProblem, ImportRejectedError } from './import-errors';
import type { PlannedFile } from './preflight';

/**
 * Step 3: every staged file's checksums, computed while it was copied, against the dataset's
 * manifests. A mismatch is bad input (rejected with every mismatch listed), not a retry.
 */
export function verifyChecksums(
  files: readonly PlannedFile[],
  results: readonly CopyResult[],
): void {
  const problems: ImportProblem[] = [];
  files.forEach((file, i) => {
    if (file.expected.sha256 && file.expected.sha256 !== results[i].sha256) {
      problems.push({
        code: 'checksum_mismatch',
        path: file.path,
        message: `sha256 expected ${file.expected.sha256}, computed ${results[i].sha256}`,
      });
    }
    if (file.expected.md5 && file.expected.md5 !== results[i].md5) {
      problems.push({
        code: 'checksum_mismatch',
        path: file.path,
        message: `md5 expected ${file.expected.md5}, computed ${results[i].md5}`,
      });
    }
  });
  if (problems.length > 0)
    throw new ImportRejectedError(
      'checksum_mismatch',
      `${problems.length} checksum(s) do not match the manifest`,
      problems,
    );
}
