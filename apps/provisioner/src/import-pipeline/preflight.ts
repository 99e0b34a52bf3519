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
  ManifestParser,
  type ManifestProblem,
  MANIFEST_FILES,
  type PathProblem,
  pinDirectory,
  PinnedDirectory,
  checkRegularFile,
  isProblem,
  readSourceChunks,
  SourceProblem,
  SourceDatasetLocation,
  type FileRules,
  type RemoteDataset,
} from '../sources/source-system';
import { type ImportProblem, ImportRejectedError, ImportTransientError } from './import-errors';
import {
  type DirectoryWalker,
  type FileBudget,
  walkOnEventLoop,
  walkOnThreads,
  walkPayloadInto,
} from './copying';
import { objectFingerprint, PlannedFiles } from './planned-files';
import { ProblemList } from './problem-list';
import type { SourceLimits } from '../config/source-config';
import { objectKeyCheck, type ObjectKeyCheck } from '../storage/object-key-check';
import type { DatasetImportContext, ResolvedDataset } from './dataset-import-context';
import type { WalkedFeed } from './walked-feed';

export interface ImportPlan {
  /** In manifest order; mtimeMs and ctimeMs only with PreflightOptions.times. */
  files: PlannedFiles;
  bytesTotal: number;
  algorithms: ChecksumAlgorithm[];
  /**
   * Where to read the files from: the payload directory as opened by preflight (never a link
   * swapped in since). Valid until `release`, which the caller must call once the copy is over.
   */
  payloadRoot: string;
  /**
   * Set where the dataset's bytes are objects in a store: what the copy reads instead of
   * payloadRoot, each file by the version (ETag) preflight listed (PlannedFiles.version).
   */
  remote?: RemoteDataset;
  /**
   * How long after a file's last change its times are trusted to show the next one: a file
   * copied sooner is not recorded for a later attempt to keep (StagedFilesRecorder). Null where
   * each file's version says whether it changed (a remote dataset's ETags).
   */
  recentChangeMs: number | null;
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
  /**
   * Keep each file's modification and change times (what an earlier attempt's copy is compared
   * with): only needed when there are earlier attempts.
   */
  times?: boolean;
  /**
   * Hands each vetted file to the staging step while the walk and the checks go on (opened only
   * when the manifests were read without a problem; ended when preflight is over either way).
   */
  feed?: WalkedFeed;
  /** A directory's ImportPlan.recentChangeMs; by default RECENT_CHANGE_MS (tests of fresh files: 0). */
  recentChangeMs?: number;
}

/**
 * A file changed this recently may change again within one tick of a coarse file-system clock
 * (NFS, some FUSE mounts: a second) without its times moving: not recorded for reuse. Its last
 * change is its ctime, which every write and every utimes() moves to the file system's now; its
 * mtime is whatever the depositor's tools set (rsync -t, tar and cp -p keep the submitter's
 * clock, possibly ahead of ours: a file never recorded, copied again by every attempt). A
 * remote object is not subject to this at all: its ETag changes with every write, and its
 * last-modified time is the store's clock (Swift rounds it up to the next second), not ours.
 */
const RECENT_CHANGE_MS = 2000;

/** Free space kept in reserve beyond the payload itself: metadata, other imports, the OS. */
const SPACE_MARGIN_BYTES = 64 * 1024 * 1024;
const SPACE_MARGIN_RATIO = 0.01;

/** Reads one of the dataset's own files (a manifest) in chunks within its rules. */
type ChunkReader = (
  name: string,
  rules: FileRules,
  onChunk: (chunk: Buffer) => void,
) => Promise<SourceProblem | null | 'read'>;

/** A local dataset directory's files, read through its pinned view. */
const readIn =
  (view: string): ChunkReader =>
  (name, rules, onChunk) =>
    readSourceChunks(`${view}/${name}`, name, rules, onChunk);

/** What reading a manifest into the plan's files found wrong (problems are its own). */
interface LoadedManifest {
  algorithm: ChecksumAlgorithm;
  problems: ManifestProblem[];
  unsafePaths: PathProblem[];
  unlisted: number;
  /** Second manifest only: it lists a path the first does not, or not every path of it. */
  differs: boolean;
}

/**
 * A manifest streamed into `files`: the first one read adds its paths (in its order) with their
 * digests, a second one sets its digests on the paths the first listed. The parser reports a
 * path listed twice in either.
 */
async function loadManifest(
  read: ChunkReader,
  algorithm: ChecksumAlgorithm,
  limits: SourceLimits,
  files: PlannedFiles,
  first: boolean,
): Promise<LoadedManifest | SourceProblem | null> {
  const unknown = new Set<string>();
  let listed = 0;
  const add = first
    ? (path: string, hex: string) => {
        if (!files.add(path)) return false;
        files.setDigest(algorithm, files.count - 1, hex);
        return true;
      }
    : (path: string, hex: string) => {
        const i = files.indexOf(path);
        if (i < 0) return unknown.has(path) ? false : (unknown.add(path), true);
        if (!files.listAgain(i)) return false;
        listed += 1;
        files.setDigest(algorithm, i, hex);
        return true;
      };
  const parser = new ManifestParser(algorithm, add);
  const file = MANIFEST_FILES[algorithm];
  const outcome = await read(file, manifestRules(limits), (chunk) => parser.push(chunk));
  if (outcome !== 'read') return outcome;
  parser.end();
  return {
    algorithm,
    problems: parser.problems,
    unsafePaths: parser.unsafePaths,
    unlisted: parser.unlisted,
    differs: !first && (unknown.size > 0 || listed !== files.count),
  };
}

/**
 * Waits until the dataset's files fit the worker's budget, counted as the lines of its first
 * manifest (an upper bound: blank lines count too), which is read once more for it, in chunks.
 * A manifest that cannot be read counts nothing here: loading it reports why. More files than
 * the whole budget: refused, as no wait would make room.
 */
async function admit(
  read: ChunkReader,
  budget: FileBudget,
  limits: SourceLimits,
): Promise<{ release: () => void; lines: number }> {
  let lines = 0;
  for (const algorithm of ALGORITHMS) {
    let last = NEWLINE;
    const file = MANIFEST_FILES[algorithm];
    const outcome = await read(file, manifestRules(limits), (chunk) => {
      for (let at = chunk.indexOf(NEWLINE); at >= 0; at = chunk.indexOf(NEWLINE, at + 1)) lines++;
      if (chunk.length > 0) last = chunk[chunk.length - 1];
    });
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
  return { release: await budget.acquire(lines), lines };
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
  { dataset, target, earlierAreas }: ResolvedDataset,
  feed?: WalkedFeed,
): Promise<ImportPlan> {
  const pool = ctx.copyPool;
  const options: PreflightOptions = {
    limits: ctx.sourceLimits,
    identity: dataset.directoryIdentity,
    walker: pool && pool.size > 0 ? walkOnThreads(pool, ctx.signal) : undefined,
    objectKey: objectKeyCheck(ctx.storage, target),
    budget: ctx.fileBudget,
    times: earlierAreas.length > 0,
    feed,
    recentChangeMs: ctx.recentChangeMs,
  };
  const freeBytes = () => ctx.storage.freeBytes();
  const remote = ctx.source.remoteDataset?.(ctx.datasetId);
  if (remote) return preflightRemoteDataset(remote, freeBytes, options);
  return preflightDataset(ctx.source.locateDataset(ctx.datasetId), freeBytes, options);
}

/**
 * preflightDataset for a dataset whose bytes are objects in a store: the same checks, reports
 * and rejections, the marker and manifests read as objects and the payload listed page by page.
 * Every file's ETag is kept (ObjectVersions): the copy reads only that version, and its
 * fingerprint and last-modified time stand for the inode and times a later attempt compares.
 */
export async function preflightRemoteDataset(
  remote: RemoteDataset,
  freeBytes: () => Promise<number>,
  options: PreflightOptions,
): Promise<ImportPlan> {
  const read: ChunkReader = (name, rules, onChunk) => remote.readChunks(name, rules, onChunk);
  const admitted = options.budget ? await admit(read, options.budget, options.limits) : null;
  const release = async () => admitted?.release();
  try {
    // Times always: an object's last-modified time is what its record is compared with.
    const files = new PlannedFiles({ expectedFiles: admitted?.lines, times: true });
    const reader: DatasetReader = {
      read,
      marker: async () =>
        (await remote.hasMarker())
          ? null
          : { code: 'marker_missing', message: `no ${READY_MARKER} marker` },
      walk: async (onFile) => {
        const problems = new ProblemList();
        await remote.walkPayload(
          (object) =>
            onFile({
              path: object.path,
              readable: true,
              size: object.size,
              dev: 0,
              ino: objectFingerprint(object.etag),
              mtimeMs: object.lastModifiedMs,
              ctimeMs: object.lastModifiedMs,
              version: object.etag,
            }),
          (problem) => problems.add(problem),
        );
        return problems;
      },
      root: '',
      // The ETag read with If-Match, not the times, says whether an object changed.
      recentChangeMs: null,
    };
    const plan = await check(reader, options, freeBytes, files);
    return { ...plan, payloadRoot: '', remote, release };
  } catch (error) {
    await release();
    throw error;
  }
}

/** A payload file as a walk finds it. */
interface WalkedFile {
  path: string;
  readable: boolean;
  size: number;
  dev: number;
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
  /** A remote object's ETag. */
  version?: string;
}

/** How preflight reads a dataset: a local directory or a remote one. */
interface DatasetReader {
  read: ChunkReader;
  /** The marker's problem (missing, not a regular file), null when it is fine. */
  marker(): Promise<ImportProblem | null>;
  /** Walks the payload, handing each file found; returns the walk's own problems. */
  walk(onFile: (file: WalkedFile) => void): Promise<ProblemList>;
  /** Where the planned files are, for the readability check ('' when remote: all readable). */
  root: string;
  /** ImportPlan.recentChangeMs: how far its files' times can be trusted. */
  recentChangeMs: number | null;
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
  let admitted: { release: () => void; lines: number } | null = null;
  const release = async () => {
    admitted?.release();
    await payload?.close();
    await dir.close();
  };
  try {
    if (options.budget) admitted = await admit(readIn(dir.view), options.budget, options.limits);
    const pinnedPayload = await pinDirectory(`${dir.view}/${PAYLOAD_DIR}`, PAYLOAD_DIR);
    if (pinnedPayload && !isProblem(pinnedPayload)) payload = pinnedPayload;
    const files = new PlannedFiles({ expectedFiles: admitted?.lines, times: options.times });
    const reader: DatasetReader = {
      read: readIn(dir.view),
      marker: async () => {
        const stats = await lstat(`${dir.view}/${READY_MARKER}`).catch(() => null);
        if (!stats) return { code: 'marker_missing', message: `no ${READY_MARKER} marker` };
        return checkRegularFile(stats, READY_MARKER, MARKER_RULES);
      },
      walk: (onFile) =>
        payload
          ? walkPayloadInto(payload.view, options.walker ?? walkOnEventLoop, onFile)
          : Promise.resolve(
              ProblemList.of(
                pinnedPayload === null
                  ? {
                      code: 'payload_missing',
                      path: '',
                      message: 'the payload directory is missing',
                    }
                  : (pinnedPayload as SourceProblem),
              ),
            ),
      root: payload?.view ?? '',
      recentChangeMs: options.recentChangeMs ?? RECENT_CHANGE_MS,
    };
    const plan = await check(reader, options, freeBytes, files);
    return { ...plan, payloadRoot: payload!.view, release };
  } catch (error) {
    // Files staging reads through the payload's view: closed once none is in flight.
    if (options.feed) {
      options.feed.halt();
      await options.feed.idle();
    }
    await release();
    throw error;
  }
}

async function check(
  reader: DatasetReader,
  options: PreflightOptions,
  freeBytes: () => Promise<number>,
  files: PlannedFiles,
): Promise<Omit<ImportPlan, 'payloadRoot' | 'release'>> {
  try {
    return await checkAll(reader, options, freeBytes, files);
  } catch (error) {
    options.feed?.halt();
    throw error;
  } finally {
    options.feed?.end();
  }
}

async function checkAll(
  reader: DatasetReader,
  { limits, objectKey, feed }: PreflightOptions,
  freeBytes: () => Promise<number>,
  files: PlannedFiles,
): Promise<Omit<ImportPlan, 'payloadRoot' | 'release'>> {
  const problems = new ProblemList();
  const manifests: LoadedManifest[] = [];
  let refusedManifest = false;
  const marker = await reader.marker();
  if (marker) problems.add(marker);
  for (const algorithm of ALGORITHMS) {
    const loaded = await loadManifest(
      reader.read,
      algorithm,
      limits,
      files,
      manifests.length === 0 && !refusedManifest,
    );
    if (loaded && isProblem(loaded)) {
      problems.add(loaded);
      refusedManifest = true;
    } else if (loaded) manifests.push(loaded);
  }
  // Staging may start as the walk vets files, unless what was read so far refuses the import.
  const clean =
    manifests.length > 0 &&
    !refusedManifest &&
    problems.total === 0 &&
    manifests.every((m) => m.problems.length + m.unsafePaths.length + m.unlisted === 0) &&
    !manifests[1]?.differs;
  if (feed && clean && reader.root)
    feed.open(
      {
        files,
        algorithms: manifests.map((m) => m.algorithm),
        payloadRoot: reader.root,
        recentChangeMs: reader.recentChangeMs,
      },
      (await freeBytes()) - SPACE_MARGIN_BYTES,
    );
  // The walk follows the manifests: each file it finds is looked up among theirs.
  const extra = new ProblemList();
  const walkProblems = await reader.walk((file) => {
    const i = files.indexOf(file.path);
    if (i >= 0) {
      // A path the walk meets twice is not possible (one directory entry each): pushed once.
      files.setWalked(i, file, file.readable, file.version);
      feed?.push(i);
    } else
      extra.add({
        code: 'extra_file',
        path: file.path,
        message: 'in the payload but not in the manifest',
      });
  });
  if (manifests.length === 0 || refusedManifest) {
    if (manifests.length === 0 && !refusedManifest)
      problems.add({
        code: 'manifest_missing',
        message: `no ${Object.values(MANIFEST_FILES).join(' or ')}`,
      });
    problems.addList(walkProblems);
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
  if (manifests.length === 2 && manifests[1].differs)
    problems.add({
      code: 'manifest_invalid',
      message: 'manifest-sha256.txt and manifest-md5.txt list different paths',
    });
  problems.addList(walkProblems);
  /** Planned files whose permission bits refuse reading: access(2) has the last word. */
  const doubtful: number[] = [];
  let bytesTotal = 0;
  for (let i = 0; i < files.count; i++) {
    if (!files.walked(i)) {
      problems.add({
        code: 'missing_file',
        path: files.path(i),
        message: 'listed in the manifest but not in the payload',
      });
    } else {
      bytesTotal += files.size[i];
      if (!files.readable(i)) doubtful.push(i);
    }
    const tooLong = objectKey?.(files.path(i));
    if (tooLong) problems.add({ code: 'key_too_long', path: files.path(i), message: tooLong });
  }
  problems.addList(extra);
  const root = reader.root;
  const unreadable = await mapTimeSliced(doubtful, (i) => {
    try {
      accessSync(`${root}/${files.path(i)}`, constants.R_OK);
      return null;
    } catch {
      return files.path(i);
    }
  });
  for (const path of unreadable)
    if (path !== null)
      problems.add({ code: 'unreadable', path, message: 'cannot be read by the provisioner' });
  if (problems.total > 0) throw rejected(problems);

  const free = await freeBytes();
  const needed =
    bytesTotal + Math.max(SPACE_MARGIN_BYTES, Math.ceil(bytesTotal * SPACE_MARGIN_RATIO));
  if (needed > free) {
    throw new ImportTransientError(
      'insufficient_space',
      `storage has ${free} bytes free, the import needs ${needed} (payload plus margin)`,
    );
  }
  return {
    files,
    bytesTotal,
    algorithms: manifests.map((m) => m.algorithm),
    recentChangeMs: reader.recentChangeMs,
  };
}
