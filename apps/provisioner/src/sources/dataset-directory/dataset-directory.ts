import { Stats } from 'node:fs';
import type { SourceLimits } from '../../config/source-config';
import { JsonDocument, readJsonDocumentSync, summarizeDatasetDocument } from './json-document';
import { ChecksumAlgorithm, MANIFEST_FILES, ManifestParser } from './manifest';
import { PathHashSet } from './path-hash-set';
import { PayloadListing } from './payload-listing';
import { markPresentEntries, walkBudget } from './payload-presence';
import { checkDirectory, identityOf, pinDirectorySync } from './pinned-directory';
import {
  checkRegularFile,
  FileRules,
  isProblem,
  lstatIfPresent,
  readSourceChunksSync,
  refusal,
  SourceProblem,
} from './source-file';

/** Why a dataset is not ready to import; the source adapters' reasons included. */
export type DatasetNotReadyReason =
  | 'submission_not_eligible'
  | 'not_delivered'
  /** A metadata file or the directory is a link, a special file, or over its size limit. */
  | 'metadata_refused'
  /** dataset.json is missing, not a JSON object, or does not name the submission listing it. */
  | 'metadata_invalid'
  | 'marker_missing'
  | 'manifest_missing'
  | 'manifest_invalid'
  | 'files_missing';

/**
 * The directory layout shared by drop-zone datasets and landing-zone datasets:
 *   <dir>/manifest-sha256.txt and/or manifest-md5.txt  (`<hex>  <path relative to payload/>`)
 *   <dir>/payload/...                                   (the files)
 *   <dir>/.ready                                        (written last by the deliverer)
 *   <dir>/dataset.json                                  (drop zones only)
 * Everything in it is written by depositors: the directory, the marker, the manifests and
 * dataset.json must be what they claim (no links, no special files, sizes within the limits).
 */
export const READY_MARKER = '.ready';
export const PAYLOAD_DIR = 'payload';
export const DATASET_DOCUMENT = 'dataset.json';

export const ALGORITHMS = Object.keys(MANIFEST_FILES) as ChecksumAlgorithm[];

export function metadataRules(limits: SourceLimits): FileRules {
  return {
    maxBytes: limits.metadataMaxBytes,
    setting: 'SOURCE_METADATA_MAX_BYTES',
    singleLink: true,
  };
}

export function manifestRules(limits: SourceLimits): FileRules {
  return {
    maxBytes: limits.manifestMaxBytes,
    setting: 'SOURCE_MANIFEST_MAX_BYTES',
    singleLink: true,
  };
}

/** The marker's content is never read: it only has to be a regular file. */
export const MARKER_RULES: FileRules = {
  maxBytes: Number.MAX_SAFE_INTEGER,
  setting: '',
  singleLink: false,
};

export interface DirectoryInspection {
  ready: boolean;
  reason: DatasetNotReadyReason | null;
  reasonDetail: string | null;
  fileCount: number | null;
  byteSize: number | null;
  /** Every refused file (reason `metadata_refused`): the full list, for the import's error. */
  problems: SourceProblem[];
  /** Device and inode of the directory as read (null when it was not): imports compare it. */
  identity: string | null;
  /**
   * The longest manifest paths (UTF-8 bytes, longest first, at most LONGEST_KEPT), where the
   * reading was an import request's ('presence'): a store that limits the length of an
   * object's name (S3) refuses the request at once when they do not fit.
   */
  longestPaths?: string[];
}

/** Longest manifest paths an import request's reading keeps (each at most 4,000 bytes). */
const LONGEST_KEPT = 3;

/** The few longest of the paths it is shown, measured in UTF-8 bytes only when they could be. */
class LongestPaths {
  private readonly kept: { path: string; bytes: number }[] = [];

  add(path: string): void {
    const shortest = this.kept.length < LONGEST_KEPT ? 0 : this.kept[this.kept.length - 1].bytes;
    if (path.length * 3 <= shortest) return;
    const bytes = Buffer.byteLength(path);
    if (bytes <= shortest) return;
    if (this.kept.length === LONGEST_KEPT) this.kept.pop();
    this.kept.push({ path, bytes });
    this.kept.sort((a, b) => b.bytes - a.bytes);
  }

  paths(): string[] {
    return this.kept.map((k) => k.path);
  }
}

/** What one read of a dataset directory found: the inspection and, when asked, dataset.json. */
export interface DatasetReading {
  inspection: DirectoryInspection;
  document: JsonDocument | null;
}

/**
 * 'sizes' (listings): every manifest path is looked up and the sizes summed. 'presence' (an
 * import request's 409): every manifest path must exist, found by walking the payload once;
 * the byte size is null. 'none' (the import, whose preflight checks every file itself): only
 * whether the dataset was delivered (directory, marker, metadata files); `ready` then means
 * delivered and both counts are null.
 */
export type PayloadCheck = 'none' | 'presence' | 'sizes';

export interface ReadDatasetOptions {
  /**
   * dataset.json (drop zones): not read, read whole (imports) or summarised to what listings
   * show (see summarizeDatasetDocument).
   */
  document: 'none' | 'summary' | 'full';
  /** How far to look into the manifests and payload: see PayloadCheck. */
  payload: PayloadCheck;
  limits: SourceLimits;
}

/** A dataset not ready to import, for `reason`. */
export function notReady(
  reason: DatasetNotReadyReason,
  reasonDetail: string | null = null,
  identity: string | null = null,
): DirectoryInspection {
  return {
    ready: false,
    reason,
    reasonDetail,
    fileCount: null,
    byteSize: null,
    problems: [],
    identity,
  };
}

/** A dataset delivered, as a reading that does not look at its payload ('none') shows it. */
export function delivered(identity: string | null): DirectoryInspection {
  return { ...notReady('not_delivered', null, identity), ready: true, reason: null };
}

/** The summary of refusals shown in listings; the full list stays in `problems`. */
export function refusedInspection(
  problems: SourceProblem[],
  identity: string | null,
): DirectoryInspection {
  const shown = problems.slice(0, 5).map((p) => p.message);
  const more = problems.length > shown.length ? `; and ${problems.length - shown.length} more` : '';
  return { ...notReady('metadata_refused', `${shown.join('; ')}${more}`, identity), problems };
}

/** The paths whose lstat signature tells whether a reading still holds (see ScanCache). */
export function watchedPaths(dir: string, document: boolean): string[] {
  return [
    dir,
    `${dir}/${PAYLOAD_DIR}`,
    ...ALGORITHMS.map((a) => `${dir}/${MANIFEST_FILES[a]}`),
    ...(document ? [`${dir}/${DATASET_DOCUMENT}`] : []),
  ];
}

/**
 * Reads a dataset directory in blocking calls: meant for the source-scan thread (see
 * SourceScanner), never the event loop of a process serving requests. The directory is opened
 * without following a link and everything in it is reached through that descriptor.
 *
 * Ready: nothing refused, the marker and a manifest exist, the manifests parse and agree, and
 * every manifest path exists under payload/. Unsafe manifest paths (`..`, absolute, reserved)
 * are not looked up at all: such a dataset counts as ready so that its import is rejected with
 * the full list of problems, which is what the submitter needs to fix it.
 */
export function readDatasetDirectory(dir: string, options: ReadDatasetOptions): DatasetReading {
  const pinned = pinDirectorySync(dir, '');
  if (pinned === null) return { inspection: notReady('not_delivered'), document: null };
  if (isProblem(pinned)) return { inspection: refusedInspection([pinned], null), document: null };
  try {
    const reading = readPinned(pinned.view, pinned.identity, options);
    // Where /proc is missing the view is the path itself: the directory must still be it.
    const after = lstatIfPresent(dir);
    if (!after || identityOf(after) !== pinned.identity || !after.isDirectory())
      return {
        inspection: refusedInspection(
          [refusal('replaced', '', 'was replaced while being read')],
          null,
        ),
        document: null,
      };
    return reading;
  } finally {
    pinned.close();
  }
}

function readPinned(view: string, identity: string, options: ReadDatasetOptions): DatasetReading {
  const problems: SourceProblem[] = [];
  const check = (name: string, verdict: (stats: Stats) => SourceProblem | null): boolean => {
    const stats = lstatIfPresent(`${view}/${name}`);
    if (!stats) return false;
    const problem = verdict(stats);
    if (problem) problems.push(problem);
    return true;
  };
  const marker = check(READY_MARKER, (s) => checkRegularFile(s, READY_MARKER, MARKER_RULES));
  const payload = check(PAYLOAD_DIR, (s) => checkDirectory(s, PAYLOAD_DIR));
  const present = ALGORITHMS.filter((a) =>
    check(MANIFEST_FILES[a], (s) =>
      checkRegularFile(s, MANIFEST_FILES[a], manifestRules(options.limits)),
    ),
  );
  let document: JsonDocument | null = null;
  if (options.document !== 'none') {
    document = readJsonDocumentSync(
      `${view}/${DATASET_DOCUMENT}`,
      DATASET_DOCUMENT,
      metadataRules(options.limits),
    );
    if (document.problem && document.problem.code !== 'invalid_json')
      problems.push(document.problem);
    if (options.document === 'summary') document = summarizeDatasetDocument(document);
  }
  const done = (inspection: DirectoryInspection): DatasetReading => ({ inspection, document });
  if (problems.length > 0) return done(refusedInspection(problems, identity));
  if (!marker) return done(notReady('marker_missing', null, identity));
  if (options.payload === 'none') return done(delivered(identity));
  if (present.length === 0) return done(notReady('manifest_missing', null, identity));
  return done(
    checkManifests(view, payload, present, options.limits, identity, options.payload === 'sizes'),
  );
}

/** Directories whose verdict underDirectories remembers; then it starts afresh (memory). */
const MAX_SEEN_DIRECTORIES = 10_000;

/**
 * Whether every directory on the way to a manifest path is a directory, not a link: lstat of
 * the path itself would follow a link in the middle (to another submission's files, to /etc).
 * Each directory is looked at about once (`seen`: manifests list a directory's files together).
 */
function underDirectories(root: string, path: string, seen: Map<string, boolean>): boolean {
  for (let slash = path.indexOf('/'); slash > 0; slash = path.indexOf('/', slash + 1)) {
    const dir = path.slice(0, slash);
    let ok = seen.get(dir);
    if (ok === undefined) {
      ok = lstatIfPresent(`${root}/${dir}`)?.isDirectory() ?? false;
      if (seen.size >= MAX_SEEN_DIRECTORIES) seen.clear();
      seen.set(dir, ok);
    }
    if (!ok) return false;
  }
  return true;
}

/**
 * The manifest check of a dataset directory (inspectManifests) in blocking calls: with lstat of
 * each path for its size ('sizes'), or, when only presence counts, by one walk of the payload
 * that marks what it finds (markPresentEntries), the paths the walk did not reach (a budget)
 * then looked up through directory listings (PayloadListing).
 */
function checkManifests(
  view: string,
  hasPayload: boolean,
  present: ChecksumAlgorithm[],
  limits: SourceLimits,
  identity: string,
  sizes: boolean,
): DirectoryInspection {
  const payload = hasPayload ? pinDirectorySync(`${view}/${PAYLOAD_DIR}`, PAYLOAD_DIR) : null;
  if (payload && isProblem(payload)) return refusedInspection([payload], identity);
  try {
    const directories = new Map<string, boolean>();
    const lookUp = (path: string): number | null => {
      const stats =
        payload && underDirectories(payload.view, path, directories)
          ? lstatIfPresent(`${payload.view}/${path}`)
          : null;
      return stats ? stats.size : null;
    };
    const check = inspectManifests({
      present,
      identity,
      sizes,
      longest: !sizes,
      lookUp: sizes ? lookUp : undefined,
    });
    for (let next = check.next(); ; next = check.next()) {
      if (next.done) return next.value;
      const step = next.value;
      if (step.kind === 'read') step.refused = readManifest(view, step.file, limits, step.parser);
      else if (payload && !markPresentEntries(payload.view, step.paths, walkBudget(step.paths))) {
        const listing = new PayloadListing(payload.view);
        step.has = (path) => listing.has(path);
      }
    }
  } finally {
    payload?.close();
  }
}

/** A read the manifest check asks of its dataset's place (a directory, a store). */
export type ManifestCheckStep =
  /** Stream `file` into `parser` and end it; `refused`: what refused the read, if anything. */
  | { kind: 'read'; file: string; parser: ManifestParser; refused: SourceProblem | null }
  /**
   * Mark the paths the payload holds (PathHashSet.markPresent), summing their sizes into
   * `bytes`; `has`, where the marking could not see everything, tells about any other path.
   */
  | { kind: 'mark'; paths: PathHashSet; bytes: number; has: ((path: string) => boolean) | null };

export interface ManifestCheckOptions {
  /** The manifests the dataset holds, the first one primary. */
  present: ChecksumAlgorithm[];
  identity: string | null;
  /** The files' sizes summed (listings), or only their presence checked (an import request). */
  sizes: boolean;
  /** Keep the longest paths (DirectoryInspection.longestPaths). */
  longest: boolean;
  /**
   * Where each path of the first manifest is looked up as it is read (a directory's lstat): its
   * size, null when absent. Without it the payload is marked once after the manifests.
   */
  lookUp?: (path: string) => number | null;
}

/**
 * The manifest check of every source of dataset directories, whatever holds them: the manifests
 * streamed (never one held whole) into a set of 64-bit path hashes (PathHashSet: never a million
 * strings), the second matched against the first; then every safe path looked up as it is read
 * (lookUp) or the payload marked once (a walk, a paged listing), and, when paths are missing,
 * the first manifest read once more to name the first few in its order. A generator of the
 * reads it needs (ManifestCheckStep, each answered in place), so a directory's blocking calls
 * and a store's awaited requests drive the same check.
 */
export function* inspectManifests(
  options: ManifestCheckOptions,
): Generator<ManifestCheckStep, DirectoryInspection, void> {
  const { present, identity, sizes, lookUp } = options;
  const paths = new PathHashSet();
  const longest = options.longest ? new LongestPaths() : null;
  const problems: string[] = [];
  const missing = new MissingPaths();
  let byteSize = 0;
  let fileCount = 0;
  let differ = false;
  for (const [index, algorithm] of present.entries()) {
    const file = MANIFEST_FILES[algorithm];
    const primary = index === 0;
    const parser = new ManifestParser(algorithm, (path) => {
      if (!primary) {
        // Every path of the second manifest must be one of the first, once.
        if (!paths.match(path)) differ = true;
        return true;
      }
      if (!paths.add(path)) return false;
      longest?.add(path);
      const size = lookUp?.(path);
      if (size === null) missing.add(path);
      else if (size !== undefined) byteSize += size;
      return true;
    });
    const read: ManifestCheckStep = { kind: 'read', file, parser, refused: null };
    yield read;
    if (read.refused) return refusedInspection([read.refused], identity);
    for (const p of parser.problems) problems.push(`${file} line ${p.line}: ${p.message}`);
    if (primary) fileCount = paths.size + parser.unsafeCount;
  }
  if (present.length === 2 && (differ || !paths.allMatched))
    problems.push('manifest-sha256.txt and manifest-md5.txt list different paths');
  if (problems.length > 0)
    return notReady('manifest_invalid', problems.slice(0, 5).join('; '), identity);
  if (!lookUp) {
    const mark: ManifestCheckStep = { kind: 'mark', paths, bytes: 0, has: null };
    yield mark;
    byteSize = mark.bytes;
    if (!paths.allPresent) {
      const parser = new ManifestParser(present[0], (path) => {
        if (!paths.isPresent(path) && !mark.has?.(path)) missing.add(path);
        return true;
      });
      const read: ManifestCheckStep = {
        kind: 'read',
        file: MANIFEST_FILES[present[0]],
        parser,
        refused: null,
      };
      yield read;
      if (read.refused) return refusedInspection([read.refused], identity);
    }
  }
  if (missing.count > 0)
    return {
      ...notReady(
        'files_missing',
        `${missing.count} manifest path(s) do not exist, e.g. ${missing.examples.join(', ')}`,
        identity,
      ),
      fileCount,
      byteSize: sizes ? byteSize : null,
    };
  return {
    ready: true,
    reason: null,
    reasonDetail: null,
    fileCount,
    byteSize: sizes ? byteSize : null,
    problems: [],
    identity,
    ...(longest ? { longestPaths: longest.paths() } : {}),
  };
}

/** The count of missing manifest paths and the first few, in manifest order. */
class MissingPaths {
  count = 0;
  readonly examples: string[] = [];

  add(path: string): void {
    if (this.count++ < 3) this.examples.push(path);
  }
}

/** Streams one manifest into the parser; what refused it, when it changed under the read. */
function readManifest(
  view: string,
  file: string,
  limits: SourceLimits,
  parser: ManifestParser,
): SourceProblem | null {
  const outcome = readSourceChunksSync(`${view}/${file}`, file, manifestRules(limits), (chunk) =>
    parser.push(chunk),
  );
  // Gone or changed kind since the lstat above: the deliverer is at work.
  if (outcome !== 'read')
    return outcome ?? refusal('replaced', file, 'was removed while being read');
  parser.end();
  return null;
}
