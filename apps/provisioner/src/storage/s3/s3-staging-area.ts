import { datasetCommitObject, isDatasetPath } from '../storage-layout';
import { formatJournal, JournalEntry, parseJournal, stagedFileOf } from '../staged-files-journal';
import {
  contentPieces,
  type ObjectContent,
  ObjectWriter,
  type ServerSideCopy,
  StagedFile,
  StagingArea,
  StagingLostError,
  TargetExistsError,
} from '../storage-system';
import type { S3Bucket } from './s3-bucket';
import type { ResumableUpload, StoredObject } from './s3-object-writer';

const STAGING_DIR = '.staging';
/**
 * Files copied at once per import: small objects are latency-bound, so several (the server's
 * cost per request sets the pace: 16 were no faster than 8, and cost twice the read buffers).
 */
const S3_COPY_LANES = 8;
/** Read buffers of a copy lane (three each): small, the part buffers hold the bytes. */
const S3_COPY_BUFFER_BYTES = 128 * 1024;

/** What an area's record (<prefix>.staging/<id>) holds: the target it stages. */
interface StagingRecord {
  target: string;
  created: string;
}

function stagingKey(bucket: S3Bucket, id: string): string {
  if (!/^[A-Za-z0-9._~-]+$/.test(id) || id === '.' || id === '..')
    throw new Error(`not a staging id: ${id}`);
  return bucket.key(`${STAGING_DIR}/${id}`);
}

async function stagingRecord(bucket: S3Bucket, id: string): Promise<StagingRecord | null> {
  const raw = await bucket.getObject(stagingKey(bucket, id));
  return raw === null ? null : (JSON.parse(raw.toString('utf8')) as StagingRecord);
}

/** Every entry of an area's journal segments, later segments overriding earlier ones. */
async function readJournal(bucket: S3Bucket, id: string): Promise<JournalEntry[]> {
  const segments = await bucket.readAllUnder(`${stagingKey(bucket, id)}/`);
  return parseJournal(segments.map((segment) => segment.toString('utf8')).join(''));
}

/** The key of an area's journal segment (S3 has no append: one object per flush). */
function journalSegmentKey(bucket: S3Bucket, id: string, sequence: number): string {
  return `${stagingKey(bucket, id)}/journal-${String(sequence).padStart(8, '0')}.jsonl`;
}

/** An area's record and journal, never the objects it staged. */
async function forgetStaging(bucket: S3Bucket, id: string): Promise<void> {
  await bucket.deleteUnder(`${stagingKey(bucket, id)}/`);
  await bucket.deleteObject(stagingKey(bucket, id));
}

/**
 * Opens area `id` for `target` (whatever an area of that id held is removed first). With
 * `adopt`, the journals of the earlier areas that staged the same target are read (the first
 * area's entry of a path wins) and every object they name is confirmed from a listing (size and
 * ETag; a HEAD where the listing does not show it): those are `inherited`. The earlier areas are
 * forgotten (record and journal, never their objects) by discardExcept, once the new area's
 * journal names what is kept. Runs inside bucket.call.
 */
export async function openS3StagingArea(
  bucket: S3Bucket,
  id: string,
  target: string,
  adopt: readonly string[],
): Promise<S3StagingArea> {
  await removeS3StagingArea(bucket, id);
  const adopted: string[] = [];
  const entries = new Map<string, JournalEntry>();
  for (const earlier of adopt) {
    if (earlier === id) continue;
    const record = await stagingRecord(bucket, earlier);
    if (record !== null && record.target !== target) {
      await removeS3StagingArea(bucket, earlier);
      continue;
    }
    adopted.push(earlier);
    for (const entry of await readJournal(bucket, earlier))
      if (entry.etag !== undefined && !entries.has(entry.path)) entries.set(entry.path, entry);
  }
  const record: StagingRecord = { target, created: new Date().toISOString() };
  await bucket.putSmall(stagingKey(bucket, id), JSON.stringify(record));
  const expected = new Map(
    [...entries.values()].map((entry) => {
      const key = bucket.key(`${target}/${entry.path}`);
      return [key, { key, size: entry.size, etag: entry.etag! }];
    }),
  );
  const stored = await bucket.stillStored(`${bucket.key(target)}/`, expected);
  const inherited = [...entries.values()].filter((entry) =>
    stored.has(bucket.key(`${target}/${entry.path}`)),
  );
  return new S3StagingArea(id, target, bucket, inherited, adopted);
}

/**
 * Removes a staging area: its record and journal, and for a dataset not committed, every
 * object and multipart upload under the dataset's keys (the area's, written by this import's
 * attempts). Runs inside bucket.call.
 */
export async function removeS3StagingArea(bucket: S3Bucket, id: string): Promise<void> {
  const record = await stagingRecord(bucket, id);
  if (
    record !== null &&
    isDatasetPath(record.target) &&
    !(await bucket.objectExists(bucket.key(datasetCommitObject(record.target))))
  ) {
    await bucket.abortUploadsUnder(`${bucket.key(record.target)}/`);
    await bucket.deleteUnder(`${bucket.key(record.target)}/`);
  }
  await forgetStaging(bucket, id);
}

/** Areas by their records, and any journal whose record is gone (so it can be removed). */
export async function listS3StagingAreas(bucket: S3Bucket): Promise<string[]> {
  const prefix = bucket.key(`${STAGING_DIR}/`);
  const names = new Set<string>();
  for await (const page of bucket.pages(prefix, '/')) {
    for (const object of page.Contents ?? []) names.add(object.Key!.slice(prefix.length));
    for (const common of page.CommonPrefixes ?? [])
      names.add(common.Prefix!.slice(prefix.length, -1));
  }
  return [...names];
}

/**
 * One attempt's staging: files go to their final keys at once (invisible until the commit
 * object exists), small objects (the stored manifest, the provenance, submission.json) are kept
 * here and written by publish, in the order given, the last one being the commit object.
 */
export class S3StagingArea implements StagingArea {
  readonly copyLanes = S3_COPY_LANES;
  readonly copyBufferBytes = S3_COPY_BUFFER_BYTES;
  readonly inherited: readonly StagedFile[];
  private readonly deferred: { path: string; content: Buffer }[] = [];
  /** Size and ETag of every object uploaded or kept, by key: publish confirms them from a listing. */
  private readonly stored = new Map<string, StoredObject>();
  /** Uploads earlier attempts left open, by key: the next upload of the key resumes its own. */
  private resumable = new Map<string, ResumableUpload>();
  private journalSegments = 0;

  constructor(
    readonly id: string,
    readonly target: string,
    private readonly bucket: S3Bucket,
    inherited: readonly JournalEntry[],
    /** Earlier areas whose journals were read: forgotten once this one's journal is written. */
    private readonly adopted: readonly string[],
  ) {
    this.inherited = inherited.map(stagedFileOf);
    for (const entry of inherited) {
      const key = bucket.key(`${target}/${entry.path}`);
      this.stored.set(key, { key, size: entry.size, etag: entry.etag! });
    }
  }

  /**
   * This area's journal first names what is kept, then the earlier areas are forgotten and
   * every other object under the target is deleted (with the multipart uploads under it). Besides
   * the inherited files `keep` names, what else it accepts stays, as on a filesystem: objects a
   * layer above wrote with a kept file (archive mode's header and body checksum), confirmed
   * again from the listing at publication.
   */
  async discardExcept(keep: (path: string) => boolean): Promise<void> {
    await this.bucket.call(async () => {
      const kept = this.inherited.filter((file) => keep(file.path));
      const keys = new Set(kept.map((file) => this.bucket.key(`${this.target}/${file.path}`)));
      for (const key of [...this.stored.keys()]) if (!keys.has(key)) this.stored.delete(key);
      await this.writeJournal(kept);
      for (const earlier of this.adopted) await forgetStaging(this.bucket, earlier);
      const prefix = `${this.bucket.key(this.target)}/`;
      this.resumable = await this.bucket.deleteUnderExcept(prefix, (object) => {
        if (keys.has(object.key)) return true;
        // Not a recorded file: kept where `keep` accepts it (it refuses any data file not kept).
        if (!keep(object.key.slice(prefix.length))) return false;
        this.stored.set(object.key, object);
        return true;
      });
    });
  }

  /** Objects are durable once their upload returned: only the journal segment is written. */
  async record(files: readonly StagedFile[]): Promise<void> {
    if (files.length === 0) return;
    await this.bucket.call(async () => {
      // An area forgotten underneath (adopted by another attempt) gets no journal of its own.
      await this.sync();
      await this.writeJournal(files);
    });
  }

  private async writeJournal(files: readonly StagedFile[]): Promise<void> {
    const entries = files.map((file): JournalEntry => {
      const stored = this.stored.get(this.bucket.key(`${this.target}/${file.path}`));
      if (!stored) throw new Error(`staging ${this.id}: ${file.path} was not stored by this area`);
      return { ...file, etag: stored.etag };
    });
    await this.bucket.putSmall(
      journalSegmentKey(this.bucket, this.id, this.journalSegments++),
      formatJournal(entries),
    );
  }

  async createObject(relativePath: string, size?: number): Promise<ObjectWriter> {
    const key = this.bucket.key(`${this.target}/${checkedRelative(relativePath)}`);
    const resume = this.resumable.get(key);
    this.resumable.delete(key);
    const writer = this.bucket.writer(
      key,
      size,
      (object) => this.stored.set(object.key, object),
      resume,
    );
    return {
      write: (chunk) => this.bucket.call(() => writer.write(chunk)),
      commit: () => this.bucket.call(() => writer.commit()),
      abort: () => writer.abort(),
      suspend: () => writer.suspend(),
      get reusedBytes() {
        return writer.reusedBytes;
      },
    };
  }

  copyObjectFrom(relativePath: string, source: ServerSideCopy): Promise<boolean> | null {
    if (source.store !== this.bucket.store || !this.bucket.copiesConditionally(source.etag))
      return null;
    const key = this.bucket.key(`${this.target}/${checkedRelative(relativePath)}`);
    // A copy replaces whatever upload an earlier attempt left open for the key.
    this.resumable.delete(key);
    return this.bucket.call(async () => {
      const stored = await this.bucket.copyFrom(key, source);
      if (stored !== null) this.stored.set(key, stored);
      return stored !== null;
    });
  }

  async writeSmallObject(relativePath: string, content: ObjectContent): Promise<void> {
    const pieces = [...contentPieces(content)];
    this.deferred.push({ path: checkedRelative(relativePath), content: Buffer.concat(pieces) });
  }

  /** S3 has no directories. */
  async createCollection(): Promise<void> {}

  /** Every object is durable once its upload returned; the area must still be this attempt's. */
  async sync(): Promise<void> {
    const exists = await this.bucket.call(() =>
      this.bucket.objectExists(stagingKey(this.bucket, this.id)),
    );
    if (!exists) throw new StagingLostError(this.id);
  }

  /**
   * Publishes the area at its target by writing its deferred small objects, the commit object
   * last. S3 servers without conditional writes (Swift) cannot refuse a second writer of the same
   * key: the import's job lock guarantees one attempt per dataset, and the commit object is
   * checked right before it is written; `committed` is called once it is. Then the area's record
   * and journal go. Runs inside bucket.call.
   */
  async publish(committed: () => void): Promise<void> {
    const path = this.target;
    const commit = this.deferred[this.deferred.length - 1];
    if (!commit) throw new Error(`staging ${this.id} holds no commit object`);
    if (isDatasetPath(path) && `${path}/${commit.path}` !== datasetCommitObject(path))
      throw new Error(`a dataset is committed by ${datasetCommitObject(path)}, not ${commit.path}`);
    await this.sync();
    await this.bucket.confirmListed(`${this.bucket.key(path)}/`, this.stored);
    if (await this.bucket.objectExists(this.bucket.key(`${path}/${commit.path}`)))
      throw new TargetExistsError(path);
    for (const object of this.deferred) {
      let stored: StoredObject | undefined;
      const writer = this.bucket.writer(
        this.bucket.key(`${path}/${object.path}`),
        object.content.length,
        (s) => {
          stored = s;
        },
      );
      await writer.write(object.content);
      await writer.commit();
      await this.bucket.confirmObject(stored!);
    }
    committed();
    // The area's own journal segments by name: no listing of its prefix on every publish.
    const journalKeys = Array.from({ length: this.journalSegments }, (_, i) =>
      journalSegmentKey(this.bucket, this.id, i),
    );
    await this.bucket.deleteKeys(journalKeys, `${stagingKey(this.bucket, this.id)}/`);
    await this.bucket.deleteObject(stagingKey(this.bucket, this.id));
    // Uploads of dead attempts that no removal reached; none of this attempt's is open now.
    if (isDatasetPath(path)) await this.bucket.abortUploadsUnder(`${this.bucket.key(path)}/`);
  }
}

/** A relative key below the target: no empty, `.` or `..` segment (preflight refuses them too). */
function checkedRelative(path: string): string {
  if (path.split('/').some((segment) => segment === '' || segment === '.' || segment === '..'))
    throw new Error(`staging path escapes its area: ${path}`);
  return path;
}
