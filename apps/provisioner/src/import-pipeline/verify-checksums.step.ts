import type { CopyResult } from './hashing-copy';
import { ImportRejectedError } from './import-errors';
import { ProblemList } from './problem-list';
import type { PlannedFile } from './preflight';

/**
 * Step 3: every staged file's checksums, computed while it was copied, against the dataset's
 * manifests. A mismatch is bad input (rejected with the first 1,000 mismatches and the count
 * of all), not a retry.
 */
export function verifyChecksums(
  files: readonly PlannedFile[],
  results: readonly CopyResult[],
): void {
  const problems = new ProblemList();
  files.forEach((file, i) => {
    if (file.expected.sha256 && file.expected.sha256 !== results[i].sha256) {
      problems.add({
        code: 'checksum_mismatch',
        path: file.path,
        message: `sha256 expected ${file.expected.sha256}, computed ${results[i].sha256}`,
      });
    }
    if (file.expected.md5 && file.expected.md5 !== results[i].md5) {
      problems.add({
        code: 'checksum_mismatch',
        path: file.path,
        message: `md5 expected ${file.expected.md5}, computed ${results[i].md5}`,
      });
    }
  });
  if (problems.total > 0)
    throw new ImportRejectedError(
      'checksum_mismatch',
      `${problems.total} checksum(s) do not match the manifest`,
      problems.details(),
    );
}
