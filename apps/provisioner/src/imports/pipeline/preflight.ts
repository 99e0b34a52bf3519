import { access } from 'node:fs/promises';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { mapTimeSliced } from '../../common/time-sliced';
import { loadManifests, READY_MARKER } from '../../sources/dataset-directory/dataset-directory';
import { ChecksumAlgorithm, MANIFEST_FILES } from '../../sources/dataset-directory/manifest';
import { SourceDatasetLocation } from '../../sources/source-system';
import { ImportProblem, ImportRejectedError, ImportTransientError } from './import-errors';
import { walkPayload } from './payload-walker';

export interface PlannedFile {
  path: string;
  size: number;
  mtimeMs: number;
  expected: Partial<Record<ChecksumAlgorithm, string>>;
}

export interface ImportPlan {
  files: PlannedFile[];
  bytesTotal: number;
  algorithms: ChecksumAlgorithm[];
}

/** Free space kept in reserve beyond the payload itself: metadata, other imports, the OS. */
const SPACE_MARGIN_BYTES = 64 * 1024 * 1024;
const SPACE_MARGIN_RATIO = 0.01;

/**
 * Everything that can be checked before a byte is copied, reported all at once:
 * marker and manifests, unsafe manifest paths, forbidden files and names, manifest vs walk,
 * readability, free space. Bad input -> ImportRejectedError; no space -> ImportTransientError.
 */
export async function preflightDataset(
  location: SourceDatasetLocation,
  freeBytes: () => Promise<number>,
): Promise<ImportPlan> {
  const problems: ImportProblem[] = [];
  const [loaded, walk, marker] = await Promise.all([
    loadManifests(location.directory),
    walkPayload(location.payloadRoot),
    access(join(location.directory, READY_MARKER)).then(
      () => true,
      () => false,
    ),
  ]);
  if (!marker) problems.push({ code: 'marker_missing', message: `no ${READY_MARKER} marker` });
  if (!loaded) {
    problems.push({
      code: 'manifest_missing',
      message: `no ${Object.values(MANIFEST_FILES).join(' or ')}`,
    });
    throw new ImportRejectedError('preflight_failed', 'the dataset failed preflight', [
      ...problems,
      ...walk.problems,
    ]);
  }
  for (const message of loaded.problems) problems.push({ code: 'manifest_invalid', message });
  for (const manifest of loaded.manifests) {
    for (const unsafe of manifest.unsafePaths) {
      problems.push({
        code: `manifest_${unsafe.code}`,
        path: unsafe.path,
        message: `unsafe path in ${MANIFEST_FILES[manifest.algorithm]} (${unsafe.code})`,
      });
    }
  }
  problems.push(...walk.problems);
  const primary = loaded.manifests[0];
  for (const path of primary.entries.keys()) {
    if (!walk.files.has(path))
      problems.push({
        code: 'missing_file',
        path,
        message: 'listed in the manifest but not in the payload',
      });
  }
  for (const path of walk.files.keys()) {
    if (!primary.entries.has(path))
      problems.push({
        code: 'extra_file',
        path,
        message: 'in the payload but not in the manifest',
      });
  }
  const files: PlannedFile[] = [...primary.entries.keys()]
    .filter((path) => walk.files.has(path))
    .map((path) => {
      const walked = walk.files.get(path)!;
      const expected: Partial<Record<ChecksumAlgorithm, string>> = {};
      for (const manifest of loaded.manifests) {
        const hex = manifest.entries.get(path);
        if (hex) expected[manifest.algorithm] = hex;
      }
      return { path, size: walked.size, mtimeMs: walked.mtimeMs, expected };
    });
  const unreadable = await mapTimeSliced(files, (file) => {
    try {
      accessSync(join(location.payloadRoot, file.path), constants.R_OK);
      return null;
    } catch {
      return file.path;
    }
  });
  for (const path of unreadable)
    if (path !== null)
      problems.push({ code: 'unreadable', path, message: 'cannot be read by the provisioner' });
  if (problems.length > 0)
    throw new ImportRejectedError(
      'preflight_failed',
      `the dataset failed preflight (${problems.length} problem(s))`,
      problems,
    );

  const bytesTotal = files.reduce((sum, f) => sum + f.size, 0);
  const free = await freeBytes();
  const needed =
    bytesTotal + Math.max(SPACE_MARGIN_BYTES, Math.ceil(bytesTotal * SPACE_MARGIN_RATIO));
  if (needed > free) {
    throw new ImportTransientError(
      'insufficient_space',
      `storage has ${free} bytes free, the import needs ${needed} (payload plus margin)`,
    );
  }
  return { files, bytesTotal, algorithms: loaded.manifests.map((m) => m.algorithm) };
}
