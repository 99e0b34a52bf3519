import { lstat, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DatasetNotReadyReason } from '../source-system';
import { mapLimit } from '../../common/map-limit';
import { ChecksumAlgorithm, MANIFEST_FILES, ParsedManifest, parseManifest } from './manifest';

/**
 * The directory layout shared by drop-zone datasets and landing-zone datasets:
 *   <dir>/manifest-sha256.txt and/or manifest-md5.txt  (`<hex>  <path relative to payload/>`)
 *   <dir>/payload/...                                   (the files)
 *   <dir>/.ready                                        (written last by the deliverer)
 */
export const READY_MARKER = '.ready';
export const PAYLOAD_DIR = 'payload';

export interface DirectoryInspection {
  ready: boolean;
  reason: DatasetNotReadyReason | null;
  reasonDetail: string | null;
  fileCount: number | null;
  byteSize: number | null;
}

export interface LoadedManifests {
  manifests: ParsedManifest[];
  /** Problems that make the manifests unusable, human-readable. */
  problems: string[];
}

const STAT_CONCURRENCY = 32;

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

async function readIfPresent(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Reads every manifest present; both manifests (when there are two) must list the same paths. */
export async function loadManifests(dir: string): Promise<LoadedManifests | null> {
  const manifests: ParsedManifest[] = [];
  for (const algorithm of Object.keys(MANIFEST_FILES) as ChecksumAlgorithm[]) {
    const text = await readIfPresent(join(dir, MANIFEST_FILES[algorithm]));
    if (text !== null) manifests.push(parseManifest(algorithm, text));
  }
  if (manifests.length === 0) return null;
  const problems: string[] = [];
  for (const manifest of manifests) {
    const file = MANIFEST_FILES[manifest.algorithm];
    for (const p of manifest.problems) problems.push(`${file} line ${p.line}: ${p.message}`);
  }
  if (manifests.length === 2) {
    const [a, b] = manifests;
    const differ =
      a.entries.size !== b.entries.size ||
      [...a.entries.keys()].some((path) => !b.entries.has(path));
    if (differ) problems.push('manifest-sha256.txt and manifest-md5.txt list different paths');
  }
  return { manifests, problems };
}

/**
 * Readiness of a dataset directory: marker and manifest exist, the manifest parses, and every
 * manifest path exists under payload/. Unsafe manifest paths (`..`, absolute, reserved) are not
 * looked up at all: such a dataset counts as ready so that its import is rejected with the full
 * list of problems, which is what the submitter needs to fix it.
 */
export async function inspectDatasetDirectory(dir: string): Promise<DirectoryInspection> {
  const notReady = (
    reason: DatasetNotReadyReason,
    reasonDetail: string | null = null,
  ): DirectoryInspection => ({
    ready: false,
    reason,
    reasonDetail,
    fileCount: null,
    byteSize: null,
  });
  if (!(await exists(dir))) return notReady('not_delivered');
  if (!(await exists(join(dir, READY_MARKER)))) return notReady('marker_missing');
  const loaded = await loadManifests(dir);
  if (!loaded) return notReady('manifest_missing');
  if (loaded.problems.length > 0)
    return notReady('manifest_invalid', loaded.problems.slice(0, 5).join('; '));
  const manifest = loaded.manifests[0];
  const paths = [...manifest.entries.keys()];
  const sizes = await mapLimit(paths, STAT_CONCURRENCY, async (path) => {
    try {
      return (await stat(join(dir, PAYLOAD_DIR, path))).size;
    } catch {
      return null;
    }
  });
  const missing = paths.filter((_, i) => sizes[i] === null);
  const byteSize = sizes.reduce<number>((sum, size) => sum + (size ?? 0), 0);
  if (missing.length > 0) {
    return {
      ready: false,
      reason: 'files_missing',
      reasonDetail: `${missing.length} manifest path(s) do not exist, e.g. ${missing.slice(0, 3).join(', ')}`,
      fileCount: paths.length + manifest.unsafePaths.length,
      byteSize,
    };
  }
  return {
    ready: true,
    reason: null,
    reasonDetail: null,
    fileCount: paths.length + manifest.unsafePaths.length,
    byteSize,
  };
}
