import type { CopyResult } from './copying';
import { ImportRejectedError } from './import-errors';
import type { ImportPlan } from './preflight';
import { ProblemList } from './problem-list';

/**
 * Step 3, as each file's copy ends: its checksums, computed while it was copied, against the
 * dataset's manifests; a mismatch is added to `problems`.
 */
export function checkDigests(
  { files, algorithms }: Pick<ImportPlan, 'files' | 'algorithms'>,
  index: number,
  result: CopyResult,
  problems: ProblemList,
): void {
  for (const algorithm of algorithms) {
    const computed = algorithm === 'sha256' ? result.sha256 : result.md5;
    if (computed !== null && files.digestIs(algorithm, index, computed)) continue;
    problems.add({
      code: 'checksum_mismatch',
      path: files.path(index),
      message: `${algorithm} expected ${files.digestHex(algorithm, index)}, computed ${computed}`,
    });
  }
}

/**
 * Where no manifest gives the sha256 (an md5 one only), the plan keeps the one computed: the
 * stored manifest and the provenance list every file's sha256.
 */
export function keepComputedSha256(
  plan: Pick<ImportPlan, 'files' | 'algorithms'>,
  index: number,
  sha256: string,
): void {
  if (!plan.algorithms.includes('sha256')) plan.files.setDigest('sha256', index, sha256);
}

/**
 * Step 3, once every file is staged: a mismatch is bad input (rejected with the first 1,000
 * mismatches and the count of all), not a retry.
 */
export function verifyChecksums(mismatches: ProblemList): void {
  if (mismatches.total > 0)
    throw new ImportRejectedError(
      'checksum_mismatch',
      `${mismatches.total} checksum(s) do not match the manifest`,
      mismatches.details(),
    );
}
