import { accessSync, constants } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { mapTimeSliced } from '@app/platform';
import {
  ALGORITHMS,
  manifestRules,
  MARKER_RULES,
  PAYLOAD_DIR,
  READY_MARKER,
  ChecksumAlgorithm,
  collectingParser,
  MANIFEST_FILES,
  ParsedManifest,
  pinDirectory,
  PinnedDirectory,
  checkRegularFile,
  isProblem,
  readSourceChunks,
  SourceProblem,
  SourceDatasetLocation,
} from '../sources/source-system';
import { ImportRejectedError, ImportTransientError } from './import-errors';
import { walkOnEventLoop } from './event-loop-walk';
import { DirectoryWalker, walkPayload, WalkResult } from './payload-walker';
import { ProblemList } from './problem-list';
import { DEFAULT_SOURCE_LIMITS, type SourceLimits } from '../config/source-config';
import { objectKeyCheck, type ObjectKeyCheck } from '../storage/object-key-check';
import type { FileBudget } from './file-budget';
import type { DatasetImportContext, ResolvedDataset } from './dataset-import-context';
import { walkOnThreads } from './threaded-walk';

export interface PlannedFile {
  path: string;
  size: number;
  mtimeMs: number;
  /** Change time: with the inode, size and mtime, what an earlier attempt's copy is compared with. */
  ctimeMs: number;
  /** Device and inode the walk found: the copy must open this very file. */
  dev: number;
  ino: number;
  expected: Partial<Record<ChecksumAlgorithm, string>>;
}

export interface ImportPlan {
  files: PlannedFile[];
  bytesTotal: number;
  algorithms: ChecksumAlgorithm[];
  /**
   * Where to read the files from: the payload directory as opened by preflight (never a link
   * swapped in since). Valid until `release`, which the caller must call once the copy is over.
   */
  payloadRoot: string;
  release(): Promise<void>;
}

export interface PreflightOptions {
  limits: SourceLimits;
  /** Device and inode of the directory when the dataset was found: it must be the same. */
  identity: string | null;
  /** Reads the payload's directories (the copy threads'; by default the event loop's). */
  walker?: DirectoryWalker;
  /** Where the store limits the length of an object's name (S3): each file's check. */
  objectKey?: ObjectKeyCheck | null;
  /**
   * The worker's budget of files held by running imports: the dataset is admitted with the
   * count of its manifest's lines before any manifest is parsed, and holds them until release.
   */
  budget?: FileBudget;
}

/** Free space kept in reserve beyond the payload itself: metadata, other imports, the OS. */
const SPACE_MARGIN_BYTES = 64 * 1024 * 1024;
const SPACE_MARGIN_RATIO = 0.01;

/** A manifest read whole into memory (the import needs every digest), streamed while parsed. */
async function loadManifest(
  view: string,
  algorithm: ChecksumAlgorithm,
  limits: SourceLimits,
): Promise<ParsedManifest | SourceProblem | null> {
  const { parser, result } = collectingParser(algorithm);
  const file = MANIFEST_FILES[algorithm];
  const outcome = await readSourceChunks(`${view}/${file}`, file, manifestRules(limits), (chunk) =>
    parser.push(chunk),
  );
  if (outcome !== 'read') return outcome;
  parser.end();
  return result();
}

/**
 * Waits until the dataset's files fit the worker's budget, counted as the lines of its first
 * manifest (an upper bound: blank lines count too), which is read once more for it, in chunks.
 * A manifest that cannot be read counts nothing here: loading it reports why. More files than
 * the whole budget: refused, as no wait would make room.
 */
async function admit(view: string, budget: FileBudget, limits: SourceLimits): Promise<() => void> {
  let lines = 0;
  for (const algorithm of ALGORITHMS) {
    let last = NEWLINE;
    const file = MANIFEST_FILES[algorithm];
    const outcome = await readSourceChunks(
      `${view}/${file}`,
      file,
      manifestRules(limits),
      (chunk) => {
        for (let at = chunk.indexOf(NEWLINE); at >= 0; at = chunk.indexOf(NEWLINE, at + 1)) lines++;
        if (chunk.length > 0) last = chunk[chunk.length - 1];
      },
    );
    if (outcome === null) continue;
    if (outcome === 'read' && last !== NEWLINE) lines++;
    if (outcome !== 'read') lines = 0;
    break;
  }
  if (lines > budget.capacity)
    throw new ImportRejectedError(
      'too_many_files',
      `the dataset lists ${lines} files, more than one worker holds at once (IMPORT_MAX_FILES: ${budget.capacity})`,
    );
  return budget.acquire(lines);
}

const NEWLINE = 0x0a;

/** Problems kept in a rejection (they are stored with the job) are the first 1,000: ProblemList. */
function rejected(problems: ProblemList): ImportRejectedError {
  return new ImportRejectedError(
    'preflight_failed',
    `the dataset failed preflight (${problems.total} problem(s))`,
    problems.details(),
  );
}

/**
 * Step 1, continued (after resolveDataset): every payload file checked and planned, on the copy
 * threads when the worker has some (released by the caller).
 */
export function planDataset(
  ctx: DatasetImportContext,
  { dataset, target }: ResolvedDataset,
): Promise<ImportPlan> {
  const pool = ctx.copyPool;
  return preflightDataset(ctx.source.locateDataset(ctx.datasetId), () => ctx.storage.freeBytes(), {
    limits: ctx.sourceLimits ?? DEFAULT_SOURCE_LIMITS,
    identity: dataset.directoryIdentity,
    walker: pool && pool.size > 0 ? walkOnThreads(pool, ctx.signal) : undefined,
    objectKey: objectKeyCheck(ctx.storage, target),
    budget: ctx.fileBudget,
  });
}

/**
 * Everything that can be checked before a byte is copied, reported all at once: the dataset
 * directory, marker and manifests (regular files, not links, within their limits), unsafe
 * manifest paths, forbidden files and names, manifest vs walk, readability, free space. Bad
 * input -> ImportRejectedError; no space or a directory replaced since it was found ->
 * ImportTransientError. The dataset directory and payload/ stay open (pinned) in the plan.
 */
export async function preflightDataset(
  location: SourceDatasetLocation,
  freeBytes: () => Promise<number>,
  options: PreflightOptions,
): Promise<ImportPlan> {
  const dir = await pinDirectory(location.directory, '');
  if (
    dir === null ||
    (options.identity !== null && !isProblem(dir) && dir.identity !== options.identity)
  ) {
    if (dir && !isProblem(dir)) await dir.close();
    throw new ImportTransientError(
      'source_changed',
      'the dataset directory was removed or replaced since the dataset was found',
    );
  }
  if (isProblem(dir)) throw rejected(ProblemList.of(dir));
  let payload: PinnedDirectory | null = null;
  let admitted: (() => void) | null = null;
  const release = async () => {
    admitted?.();
    await payload?.close();
    await dir.close();
  };
  try {
    if (options.budget) admitted = await admit(dir.view, options.budget, options.limits);
    const pinnedPayload = await pinDirectory(`${dir.view}/${PAYLOAD_DIR}`, PAYLOAD_DIR);
    if (pinnedPayload && !isProblem(pinnedPayload)) payload = pinnedPayload;
    const plan = await check(dir, pinnedPayload, payload, options, freeBytes);
    return { ...plan, payloadRoot: payload!.view, release };
  } catch (error) {
    await release();
    throw error;
  }
}

async function check(
  dir: PinnedDirectory,
  pinnedPayload: PinnedDirectory | SourceProblem | null,
  payload: PinnedDirectory | null,
  { limits, walker, objectKey }: PreflightOptions,
  freeBytes: () => Promise<number>,
): Promise<Omit<ImportPlan, 'payloadRoot' | 'release'>> {
  // The walk (on the copy threads when there are some) runs while the manifests are read here.
  const walking: Promise<WalkResult> = payload
    ? walkPayload(payload.view, walker ?? walkOnEventLoop)
    : Promise.resolve({
        files: new Map(),
        problems: ProblemList.of(
          pinnedPayload === null
            ? { code: 'payload_missing', path: '', message: 'the payload directory is missing' }
            : (pinnedPayload as SourceProblem),
        ),
      });
  // Awaited below; until then a walk failing (the payload changed) must not go unhandled.
  const walkSettled = walking.then(
    () => undefined,
    () => undefined,
  );
  const problems = new ProblemList();
  const manifests: ParsedManifest[] = [];
  let refusedManifest = false;
  try {
    const markerStats = await lstat(`${dir.view}/${READY_MARKER}`).catch(() => null);
    if (!markerStats)
      problems.add({ code: 'marker_missing', message: `no ${READY_MARKER} marker` });
    else {
      const problem = checkRegularFile(markerStats, READY_MARKER, MARKER_RULES);
      if (problem) problems.add(problem);
    }
    for (const algorithm of ALGORITHMS) {
      const loaded = await loadManifest(dir.view, algorithm, limits);
      if (loaded && isProblem(loaded)) {
        problems.add(loaded);
        refusedManifest = true;
      } else if (loaded) manifests.push(loaded);
    }
  } catch (error) {
    // The walk reads through the payload's descriptor, which the caller closes once this throws.
    await walkSettled;
    throw error;
  }
  const walk = await walking;
  if (manifests.length === 0 || refusedManifest) {
    if (manifests.length === 0 && !refusedManifest)
      problems.add({
        code: 'manifest_missing',
        message: `no ${Object.values(MANIFEST_FILES).join(' or ')}`,
      });
    problems.addList(walk.problems);
    throw rejected(problems);
  }
  for (const manifest of manifests) {
    const file = MANIFEST_FILES[manifest.algorithm];
    for (const p of manifest.problems)
      problems.add({ code: 'manifest_invalid', message: `${file} line ${p.line}: ${p.message}` });
    for (const unsafe of manifest.unsafePaths) {
      problems.add({
        code: `manifest_${unsafe.code}`,
        path: unsafe.path,
        message: `unsafe path in ${file} (${unsafe.code})`,
      });
    }
    if (manifest.unlisted > 0)
      problems.add({
        code: 'manifest_invalid',
        message: `${file}: ${manifest.unlisted} more problem(s) not listed`,
      });
  }
  if (manifests.length === 2) {
    const [a, b] = manifests;
    const differ =
      a.entries.size !== b.entries.size ||
      [...a.entries.keys()].some((path) => !b.entries.has(path));
    if (differ)
      problems.add({
        code: 'manifest_invalid',
        message: 'manifest-sha256.txt and manifest-md5.txt list different paths',
      });
  }
  problems.addList(walk.problems);
  const primary = manifests[0];
  for (const path of primary.entries.keys()) {
    if (!walk.files.has(path))
      problems.add({
        code: 'missing_file',
        path,
        message: 'listed in the manifest but not in the payload',
      });
    const tooLong = objectKey?.(path);
    if (tooLong) problems.add({ code: 'key_too_long', path, message: tooLong });
  }
  for (const path of walk.files.keys()) {
    if (!primary.entries.has(path))
      problems.add({
        code: 'extra_file',
        path,
        message: 'in the payload but not in the manifest',
      });
  }
  /** Planned files whose permission bits refuse reading: access(2) has the last word. */
  const doubtful: string[] = [];
  const files: PlannedFile[] = [...primary.entries.keys()]
    .filter((path) => walk.files.has(path))
    .map((path) => {
      const walked = walk.files.get(path)!;
      if (!walked.readable) doubtful.push(path);
      const expected: Partial<Record<ChecksumAlgorithm, string>> = {};
      for (const manifest of manifests) {
        const hex = manifest.entries.get(path);
        if (hex) expected[manifest.algorithm] = hex;
      }
      return {
        path,
        size: walked.size,
        mtimeMs: walked.mtimeMs,
        ctimeMs: walked.ctimeMs,
        dev: walked.dev,
        ino: walked.ino,
        expected,
      };
    });
  const root = payload?.view ?? '';
  const unreadable = await mapTimeSliced(doubtful, (path) => {
    try {
      accessSync(`${root}/${path}`, constants.R_OK);
      return null;
    } catch {
      return path;
    }
  });
  for (const path of unreadable)
    if (path !== null)
      problems.add({ code: 'unreadable', path, message: 'cannot be read by the provisioner' });
  if (problems.total > 0) throw rejected(problems);

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
  return { files, bytesTotal, algorithms: manifests.map((m) => m.algorithm) };
}
