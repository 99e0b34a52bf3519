import type { SourceLimits } from '../../config/source-config';
import {
  ALGORITHMS,
  DATASET_DOCUMENT,
  type DatasetReading,
  delivered,
  type DirectoryInspection,
  inspectManifests,
  manifestRules,
  metadataRules,
  notReady,
  PAYLOAD_DIR,
  type PayloadCheck,
  READY_MARKER,
  refusedInspection,
} from '../dataset-directory/dataset-directory';
import {
  ABSENT_DOCUMENT,
  type JsonDocument,
  parseJsonDocument,
  summarizeDatasetDocument,
} from '../dataset-directory/json-document';
import { MANIFEST_FILES, ManifestParser } from '../dataset-directory/manifest';
import { checkRelativePath, printableName } from '../dataset-directory/payload-path';
import { type FileRules, type SourceProblem, tooLarge } from '../dataset-directory/source-file';
import type { ObjectCopySource, RemoteDataset, RemoteObject } from '../source-system';
import type { InboxBucket, ListedObject } from './inbox-bucket';

/** How one dataset's keys are laid out under the inbox prefix: `datasets/<id>/...`. */
export const datasetPrefix = (datasetId: string): string => `datasets/${datasetId}/`;

/**
 * One dataset of an S3 inbox: the drop zone's dataset directory as keys under
 * `datasets/<id>/` (dataset.json, manifest-*.txt, .ready, payload/...). It is read for listings
 * (inspect, the drop zone's readDatasetDirectory in S3 terms: same reasons, same limits) and,
 * as a RemoteDataset, by the import's preflight and copy.
 */
export class InboxDataset implements RemoteDataset {
  private readonly base: string;

  constructor(
    private readonly bucket: InboxBucket,
    readonly datasetId: string,
    private readonly limits: SourceLimits,
    /** The store, for a server-side copy (null: none allowed). */
    private readonly store: string | null,
  ) {
    this.base = datasetPrefix(datasetId);
  }

  /** The objects one level below the dataset (marker, manifests, dataset.json) and its folders. */
  top(): Promise<{ objects: ListedObject[]; folders: string[] }> {
    return this.bucket.level(this.base);
  }

  /**
   * What a listing or an import request shows of the dataset (see PayloadCheck), from `top`
   * (a listing of the dataset's first level) and, as asked, dataset.json, the manifests and a
   * paged listing of payload/.
   */
  async inspect(
    top: { objects: ListedObject[]; folders: string[] },
    options: { document: 'none' | 'summary' | 'full'; payload: PayloadCheck },
  ): Promise<DatasetReading> {
    if (top.objects.length === 0 && top.folders.length === 0)
      return { inspection: notReady('not_delivered'), document: null };
    const named = new Map(top.objects.map((o) => [o.key, o]));
    const problems: SourceProblem[] = [];
    const present = ALGORITHMS.filter((a) => named.has(MANIFEST_FILES[a]));
    for (const algorithm of present) {
      const file = MANIFEST_FILES[algorithm];
      const rules = manifestRules(this.limits);
      if (named.get(file)!.size > rules.maxBytes)
        problems.push(tooLarge(file, named.get(file)!.size, rules));
    }
    let document: JsonDocument | null = null;
    if (options.document !== 'none') {
      document = await this.readDocument();
      if (document.problem && document.problem.code !== 'invalid_json')
        problems.push(document.problem);
      if (options.document === 'summary') document = summarizeDatasetDocument(document);
    }
    const done = (inspection: DirectoryInspection): DatasetReading => ({ inspection, document });
    if (problems.length > 0) return done(refusedInspection(problems, null));
    if (!named.has(READY_MARKER)) return done(notReady('marker_missing'));
    if (options.payload === 'none') return done(delivered(null));
    if (present.length === 0) return done(notReady('manifest_missing'));
    return done(await this.checkManifests(present, options.payload === 'sizes'));
  }

  private async readDocument(): Promise<JsonDocument> {
    const rules = metadataRules(this.limits);
    const bytes = await this.bucket.readWhole(`${this.base}${DATASET_DOCUMENT}`, rules.maxBytes);
    if (bytes === null) return ABSENT_DOCUMENT;
    if (!Buffer.isBuffer(bytes))
      return { value: null, problem: tooLarge(DATASET_DOCUMENT, bytes.tooLarge, rules) };
    return parseJsonDocument(bytes, DATASET_DOCUMENT);
  }

  /**
   * The drop zone's manifest check (inspectManifests) over a listing: payload/ listed page by
   * page, marking the paths it holds and summing their sizes.
   */
  private async checkManifests(
    present: (typeof ALGORITHMS)[number][],
    sizes: boolean,
  ): Promise<DirectoryInspection> {
    const check = inspectManifests({ present, identity: null, sizes, longest: false });
    for (let next = check.next(); ; next = check.next()) {
      if (next.done) return next.value;
      const step = next.value;
      if (step.kind === 'read') step.refused = await this.readManifest(step.file, step.parser);
      else
        for await (const objects of this.bucket.objects(`${this.base}${PAYLOAD_DIR}/`))
          for (const object of objects) {
            if (step.paths.isPresent(object.key)) continue;
            step.paths.markPresent(object.key);
            if (step.paths.isPresent(object.key)) step.bytes += object.size;
          }
    }
  }

  private async readManifest(file: string, parser: ManifestParser): Promise<SourceProblem | null> {
    const outcome = await this.readChunks(file, manifestRules(this.limits), (chunk) =>
      parser.push(chunk),
    );
    if (outcome === null)
      return { code: 'replaced', path: file, message: `${file} was removed while being read` };
    if (outcome !== 'read') return outcome;
    parser.end();
    return null;
  }

  // RemoteDataset: what the import's preflight and copy read.

  hasMarker(): Promise<boolean> {
    return this.bucket.exists(`${this.base}${READY_MARKER}`);
  }

  async readChunks(
    name: string,
    rules: FileRules,
    onChunk: (chunk: Buffer) => void,
  ): Promise<'read' | SourceProblem | null> {
    const outcome = await this.bucket.readCapped(`${this.base}${name}`, rules.maxBytes, onChunk);
    if (outcome === 'read' || outcome === null) return outcome;
    return tooLarge(name, outcome.tooLarge, rules);
  }

  /**
   * payload/ page by page. A key the drop zone could not hold as a path (an empty, `.` or `..`
   * segment, a control character, a reserved or over-long name) is a problem; an empty object
   * whose key ends in `/` is a folder placeholder (what consoles create), not a file.
   */
  async walkPayload(
    onObject: (object: RemoteObject) => void,
    onProblem: (problem: SourceProblem) => void,
  ): Promise<void> {
    for await (const objects of this.bucket.objects(`${this.base}${PAYLOAD_DIR}/`))
      for (const object of objects) {
        if (object.size === 0 && object.key.endsWith('/')) continue;
        const code = checkRelativePath(object.key);
        if (code) {
          const shown = printableName(object.key);
          onProblem({
            code,
            path: shown.length > 200 ? `${shown.slice(0, 200)}…` : shown,
            message: `forbidden name (${code})`,
          });
          continue;
        }
        onObject({
          path: object.key,
          size: object.size,
          etag: object.etag,
          lastModifiedMs: object.lastModifiedMs,
        });
      }
  }

  read(path: string, etag: string, size?: number): AsyncIterable<Uint8Array> {
    return this.bucket.stream(`${this.base}${PAYLOAD_DIR}/${path}`, etag, path, size);
  }

  copySource(path: string): ObjectCopySource | null {
    if (this.store === null) return null;
    return {
      store: this.store,
      bucket: this.bucket.bucket,
      key: this.bucket.key(`${this.base}${PAYLOAD_DIR}/${path}`),
    };
  }
}
