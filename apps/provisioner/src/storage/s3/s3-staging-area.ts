import { datasetCommitObject, isDatasetPath } from '../storage-layout';
import { formatJournal, JournalEntry, JournalLines } from '../staged-files-journal';
import { StagedFileTable } from '../staged-file-table';
import {
  contentPieces,
  type ExpectedFiles,
  type InheritedFiles,
  type ObjectContent,
  ObjectWriter,
  type ServerSideCopy,
  StagedFile,
  StagingArea,
  StagingLostError,
  TargetExistsError,
} from '../storage-system';
import type { S3Bucket, SortedObjects } from './s3-bucket';
import type { ResumableUpload, S3ObjectWriter, StoredObject } from './s3-object-writer';
import { copied, PathTable } from '../../common/path-table';

const STAGING_DIR = '.staging';
/**
 * Files copied at once per import: small objects are latency-bound, so several (the server's
 * cost per request sets the pace: 16 were no faster than 8, and cost twice the read buffers).
 */
const S3_COPY_LANES = 8;
/** Read buffers of a copy lane (three each): small, the part buffers hold the bytes. */
const S3_COPY_BUFFER_BYTES = 128 * 1024;
/**
 * Parts in flight for a dataset's own objects (its stored manifest, a commit object past one
 * part): one, so a million files' manifest (~100 MiB, a dozen parts) holds one part buffer
 * while it goes up instead of every buffer of the worker's pool, which stay resident once
 * touched (PartBufferPool). Its parts are few, so their latency one after another costs little.
 */
const ONE_PART_AT_A_TIME = 1;
/** Entries of one journal segment when an area's kept files are written at once. */
const JOURNAL_BATCH = 10_000;
const JOURNAL_SEGMENT = 'journal-';

/** An S3 ETag as a digest: the MD5 of the bytes, or of the parts' MD5s and `-<parts>`. */
const DIGEST_ETAG = /^([0-9a-f]{32})(?:-(\d{1,5}))?$/;
/** `parts` of a row whose ETag is not a digest (held in `otherEtags`), and of a row not held. */
const OTHER_ETAG = 0xffff;
const REMOVED = 0xfffe;

/** Each file's planned size by row (the plan's `size` column, read where it is each time). */
export interface PlannedSizes {
  readonly size: Float64Array;
}

/**
 * Size and ETag of stored objects by row, as columns: an ETag as its 16 bytes of MD5 and the
 * part count (0 for a single-part object); one of another form (a server's own) as text on the
 * side. With the plan's sizes, a size is held only once an object's differs from its row's
 * planned size (then a column of every row's, from the plan's): 18 bytes a row where every
 * object has its planned size, 26 otherwise. A row is not held until set.
 */
export class StoredColumns {
  /** Sizes by row; null while every object set has its planned size. */
  private size: Float64Array | null;
  private md5: Buffer;
  /** Parts of the object (0: one PutObject), or OTHER_ETAG, or REMOVED. */
  private parts: Uint16Array;
  private readonly otherEtags = new Map<number, string>();
  /** Rows held. */
  live = 0;

  constructor(
    capacity: number,
    private readonly planned?: PlannedSizes,
  ) {
    this.size = planned ? null : new Float64Array(capacity);
    this.md5 = Buffer.alloc(capacity * 16);
    this.parts = new Uint16Array(capacity).fill(REMOVED);
  }

  /** Bytes the columns hold (the ETags of another form aside). */
  get bytes(): number {
    return (this.size?.byteLength ?? 0) + this.md5.byteLength + this.parts.byteLength;
  }

  set(i: number, size: number, etag: string): void {
    if (this.parts[i] === REMOVED) this.live += 1;
    if (this.size) this.size[i] = size;
    else if (size !== this.planned!.size[i]) {
      // The rows set so far hold their planned sizes: the column starts as the plan's.
      const column = new Float64Array(this.parts.length);
      const planned = this.planned!.size;
      column.set(planned.length > column.length ? planned.subarray(0, column.length) : planned);
      column[i] = size;
      this.size = column;
    }
    this.otherEtags.delete(i);
    const digest = DIGEST_ETAG.exec(etag);
    const parts = digest?.[2] === undefined ? 0 : Number(digest[2]);
    if (digest && parts < REMOVED) {
      this.md5.write(digest[1], i * 16, 16, 'hex');
      this.parts[i] = parts;
    } else {
      this.otherEtags.set(i, etag);
      this.parts[i] = OTHER_ETAG;
    }
  }

  has(i: number): boolean {
    return this.parts[i] !== REMOVED;
  }

  remove(i: number): void {
    if (this.parts[i] === REMOVED) return;
    this.parts[i] = REMOVED;
    this.otherEtags.delete(i);
    this.live -= 1;
  }

  sizeOf(i: number): number {
    return this.size ? this.size[i] : this.planned!.size[i];
  }

  etagOf(i: number): string {
    const parts = this.parts[i];
    if (parts === OTHER_ETAG) return this.otherEtags.get(i)!;
    const md5 = this.md5.toString('hex', i * 16, i * 16 + 16);
    return parts === 0 ? md5 : `${md5}-${parts}`;
  }

  /** More rows (a table's own columns; never those by the plan's rows, which do not grow). */
  grow(n: number): void {
    if (this.planned) throw new Error("columns by the plan's rows do not grow");
    this.size = copied(this.size!, new Float64Array(n));
    const parts = new Uint16Array(n).fill(REMOVED);
    parts.set(this.parts);
    this.parts = parts;
    const md5 = Buffer.alloc(n * 16);
    this.md5.copy(md5);
    this.md5 = md5;
  }
}

/**
 * What a staging area stored under its target, by path below it: each object's size and ETag as
 * StoredColumns beside a PathTable (about 60 bytes and the name an object), not a map entry and
 * an object each.
 */
export class StoredObjectTable extends PathTable {
  private readonly columns = new StoredColumns(this.capacity);

  /** Rows held. */
  get live(): number {
    return this.columns.live;
  }

  /** Holds the object at `path` (replacing what the path held): its row. */
  set(path: string, size: number, etag: string): number {
    let i = this.indexOf(path);
    if (i < 0) {
      this.add(path);
      i = this.count - 1;
    }
    this.columns.set(i, size, etag);
    return i;
  }

  /** The row of `path` while it is held, else -1. */
  rowOf(path: string): number {
    const i = this.indexOf(path);
    return i >= 0 && this.columns.has(i) ? i : -1;
  }

  has(i: number): boolean {
    return this.columns.has(i);
  }

  remove(i: number): void {
    this.columns.remove(i);
  }

  sizeOf(i: number): number {
    return this.columns.sizeOf(i);
  }

  etagOf(i: number): string {
    return this.columns.etagOf(i);
  }

  /** The rows held, in the order of their paths (PathTable.sortedByPath: a listing's, but for rare characters). */
  sortedRows(): Uint32Array {
    return heldInOrder(this, this.columns);
  }

  protected override grown(n: number): void {
    this.columns.grow(n);
  }
}

/** `table`'s rows that `columns` holds, in the order of their paths. */
function heldInOrder(table: PathTable, columns: StoredColumns): Uint32Array {
  const order = table.sortedByPath();
  let n = 0;
  for (let k = 0; k < order.length; k++) if (columns.has(order[k])) order[n++] = order[k];
  return order.subarray(0, n);
}

/** A reference to a row of the side table: the row with this bit set. */
const SIDE = 0x80000000;

/**
 * Every object a staging area stored, by reference (a number): the objects at paths the copy was
 * told to expect (`expect`, the plan's PathTable) as StoredColumns by the row of their path
 * there, so a million files' paths are not held a second time; every other object (the stored
 * manifest, the provenance, archive mode's companions, what an earlier attempt's journal named)
 * in a StoredObjectTable of its own, the side table. A path is in one of the two: one the side
 * table holds (or held) stays there.
 */
export class StoredObjects {
  private expected: { paths: PathTable; columns: StoredColumns } | null = null;

  constructor(private readonly side: StoredObjectTable = new StoredObjectTable()) {}

  /**
   * The paths the copy creates (read, never changed, while this area is used), and with
   * `planned` their sizes (an object of its planned size holds no size of its own). Once: the
   * objects stored before it are in the side table.
   */
  expect(paths: PathTable, planned?: PlannedSizes): void {
    if (this.expected) throw new Error('a staging area is told the paths it expects once');
    this.expected = { paths, columns: new StoredColumns(paths.count, planned) };
  }

  /** Bytes the columns by the plan's rows hold (0 before `expect`). */
  get expectedBytes(): number {
    return this.expected?.columns.bytes ?? 0;
  }

  /** Holds the object at `path` (replacing what the path held). */
  set(path: string, size: number, etag: string): void {
    const expected = this.expected;
    if (expected && this.side.indexOf(path) < 0) {
      const i = expected.paths.indexOf(path);
      if (i >= 0) {
        expected.columns.set(i, size, etag);
        return;
      }
    }
    this.side.set(path, size, etag);
  }

  /** The reference of the object at `path` while it is held, else -1. */
  refOf(path: string): number {
    const s = this.side.indexOf(path);
    if (s >= 0) return this.side.has(s) ? SIDE + s : -1;
    const expected = this.expected;
    const i = expected ? expected.paths.indexOf(path) : -1;
    return i >= 0 && expected!.columns.has(i) ? i : -1;
  }

  remove(ref: number): void {
    if (ref >= SIDE) this.side.remove(ref - SIDE);
    else this.expected!.columns.remove(ref);
  }

  path(ref: number): string {
    return ref >= SIDE ? this.side.path(ref - SIDE) : this.expected!.paths.path(ref);
  }

  sizeOf(ref: number): number {
    return ref >= SIDE ? this.side.sizeOf(ref - SIDE) : this.expected!.columns.sizeOf(ref);
  }

  etagOf(ref: number): string {
    return ref >= SIDE ? this.side.etagOf(ref - SIDE) : this.expected!.columns.etagOf(ref);
  }

  /** Every object held, in the order of their paths, as the listing confirmation reads them. */
  sorted(): SortedObjects {
    const { count, at } = this.sortedRefs();
    return {
      count,
      name: (k) => this.path(at(k)),
      size: (k) => this.sizeOf(at(k)),
      etag: (k) => this.etagOf(at(k)),
    };
  }

  /**
   * The references held, in the order of their paths (the k-th: `at(k)`): both tables' rows
   * merged. A few side objects (the usual: the manifest and the provenance) each find their
   * place by bisection and the plan's rows are read in their own order, not copied into a merged
   * array (4 bytes a file); many (archive mode's companions) are merged in one pass.
   */
  sortedRefs(): { count: number; at: (k: number) => number } {
    const side = this.side.sortedRows();
    for (let k = 0; k < side.length; k++) side[k] += SIDE;
    if (!this.expected) return inOrder(side);
    const expected = heldInOrder(this.expected.paths, this.expected.columns);
    if (side.length === 0) return inOrder(expected);
    if (side.length * 32 >= expected.length) return inOrder(this.merged(expected, side));
    // place[s]: the merged position of side[s]; the expected rows fill the positions between.
    const place = new Uint32Array(side.length);
    let e = 0;
    for (let s = 0; s < side.length; s++) {
      const name = this.path(side[s]);
      let high = expected.length;
      while (e < high) {
        const mid = (e + high) >>> 1;
        if (this.path(expected[mid]) < name) e = mid + 1;
        else high = mid;
      }
      place[s] = e + s;
    }
    return {
      count: expected.length + side.length,
      at: (k) => {
        // Side objects placed before k (or at it): the first s with place[s] >= k.
        let low = 0;
        let high = place.length;
        while (low < high) {
          const mid = (low + high) >>> 1;
          if (place[mid] < k) low = mid + 1;
          else high = mid;
        }
        return low < place.length && place[low] === k ? side[low] : expected[k - low];
      },
    };
  }

  /** The two orders merged in one pass. */
  private merged(expected: Uint32Array, side: Uint32Array): Uint32Array {
    const merged = new Uint32Array(expected.length + side.length);
    let e = 0;
    let m = 0;
    for (let s = 0; s < side.length; s++) {
      const name = this.path(side[s]);
      let end = e;
      while (end < expected.length && this.path(expected[end]) < name) end++;
      merged.set(expected.subarray(e, end), m);
      m += end - e;
      e = end;
      merged[m++] = side[s];
    }
    merged.set(expected.subarray(e), m);
    return merged;
  }
}

/** An order as sortedRefs gives it. */
function inOrder(order: Uint32Array): { count: number; at: (k: number) => number } {
  return { count: order.length, at: (k) => order[k] };
}

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

/**
 * Every entry of an area's journal segments in order (a later line of a path overriding an
 * earlier one is the caller's to apply), segment by segment: never the whole journal at once.
 */
async function readJournal(
  bucket: S3Bucket,
  id: string,
  onEntry: (entry: JournalEntry) => void,
): Promise<void> {
  const lines = new JournalLines(onEntry);
  await bucket.eachObjectUnder(`${stagingKey(bucket, id)}/${JOURNAL_SEGMENT}`, (body) =>
    lines.push(body),
  );
  lines.end();
}

/** The key of an area's journal segment (S3 has no append: one object per flush). */
function journalSegmentKey(bucket: S3Bucket, id: string, sequence: number): string {
  return `${stagingKey(bucket, id)}/${JOURNAL_SEGMENT}${String(sequence).padStart(8, '0')}.jsonl`;
}

/** A table's rows in `order`, as the listing confirmation reads them. */
function sortedObjects(table: StoredObjectTable, order: Uint32Array): SortedObjects {
  return {
    count: order.length,
    name: (k) => table.path(order[k]),
    size: (k) => table.sizeOf(order[k]),
    etag: (k) => table.etagOf(order[k]),
  };
}

/** An area's record and journal, never the objects it staged. */
async function forgetStaging(bucket: S3Bucket, id: string): Promise<void> {
  await bucket.deleteUnder(`${stagingKey(bucket, id)}/`);
  await bucket.deleteObject(stagingKey(bucket, id));
}

/**
 * Opens area `id` for `target` (whatever an area of that id held is removed first). With
 * `adopt`, the journals of the earlier areas that staged the same target are read into columns
 * (the first area's entry of a path wins, and within an area its last line) and every object
 * they name is confirmed from a listing (size and ETag; a HEAD where the listing does not show
 * it): those are `inherited`. The earlier areas are forgotten (record and journal, never their
 * objects) by discardExcept, once the new area's journal names what is kept. Runs inside
 * bucket.call.
 */
export async function openS3StagingArea(
  bucket: S3Bucket,
  id: string,
  target: string,
  adopt: readonly string[],
): Promise<S3StagingArea> {
  await removeS3StagingArea(bucket, id);
  const adopted: string[] = [];
  // Rows of the two tables are the same files: both add a path where neither holds it.
  const files = new StagedFileTable();
  const stored = new StoredObjectTable();
  for (const earlier of adopt) {
    if (earlier === id) continue;
    const record = await stagingRecord(bucket, earlier);
    if (record !== null && record.target !== target) {
      await removeS3StagingArea(bucket, earlier);
      continue;
    }
    adopted.push(earlier);
    const before = files.count;
    await readJournal(bucket, earlier, (entry) => {
      if (entry.etag === undefined) return;
      const i = files.indexOf(entry.path);
      if (i >= 0 && i < before) return;
      // A journal entry is a staged file and its ETag: the table takes the file's own fields.
      files.set(entry);
      stored.set(entry.path, entry.size, entry.etag);
    });
  }
  const record: StagingRecord = { target, created: new Date().toISOString() };
  await bucket.putSmall(stagingKey(bucket, id), JSON.stringify(record));
  const order = stored.sortedRows();
  const failed = await bucket.notStored(`${bucket.key(target)}/`, sortedObjects(stored, order));
  for (let k = 0; k < order.length; k++) if (failed[k]) stored.remove(order[k]);
  const rows: number[] = [];
  for (let i = 0; i < files.count; i++) if (stored.has(i)) rows.push(i);
  return new S3StagingArea(
    id,
    target,
    bucket,
    files.rows(Uint32Array.from(rows)),
    new StoredObjects(stored),
    adopted,
  );
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

/** An object publish writes: held whole (small), or a multipart upload left to complete. */
type DeferredObject =
  | { path: string; content: Buffer }
  | { path: string; upload: S3ObjectWriter; stored: () => StoredObject | undefined };

/**
 * One attempt's staging: files go to their final keys at once (invisible until the commit
 * object exists), and so do a dataset's other small objects (the stored manifest, streamed in
 * parts). What each upload stored (size and ETag) is held as columns (StoredObjects): by the
 * row of its path in the plan's table where the copy said so (expectFiles), else by path below
 * the target. The commit object (a dataset's provenance; a collection's objects) is
 * written by publish, the last one given being the commit object: held whole up to a part, else
 * sent in parts at once and only completed by publish.
 */
export class S3StagingArea implements StagingArea {
  readonly copyLanes = S3_COPY_LANES;
  readonly copyBufferBytes = S3_COPY_BUFFER_BYTES;
  private readonly deferred: DeferredObject[] = [];
  /** Uploads earlier attempts left open, by key: the next upload of the key resumes its own. */
  private resumable = new Map<string, ResumableUpload>();
  private journalSegments = 0;
  /** The target's key and '/': every staged object's key is this and its path. */
  private readonly prefix: string;

  constructor(
    readonly id: string,
    readonly target: string,
    private readonly bucket: S3Bucket,
    readonly inherited: InheritedFiles,
    /** Size and ETag of every object uploaded or kept: publish confirms them from a listing. */
    private readonly stored: StoredObjects,
    /** Earlier areas whose journals were read: forgotten once this one's journal is written. */
    private readonly adopted: readonly string[],
  ) {
    this.prefix = `${bucket.key(target)}/`;
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
      let batch: JournalEntry[] = [];
      for (let k = 0; k < this.inherited.length; k++) {
        const file = this.inherited.at(k)!;
        const row = this.stored.refOf(file.path);
        if (!keep(file.path)) {
          if (row >= 0) this.stored.remove(row);
          continue;
        }
        batch.push({ ...file, etag: this.stored.etagOf(row) });
        if (batch.length === JOURNAL_BATCH) {
          await this.putJournal(batch);
          batch = [];
        }
      }
      await this.putJournal(batch);
      for (const earlier of this.adopted) await forgetStaging(this.bucket, earlier);
      const prefix = this.prefix;
      await this.bucket.deleteUnderExcept(prefix, (object) => {
        const path = object.key.slice(prefix.length);
        if (this.stored.refOf(path) >= 0) return true;
        // Not a recorded file: kept where `keep` accepts it (it refuses any data file not kept).
        if (!keep(path)) return false;
        this.stored.set(path, object.size, object.etag);
        return true;
      });
      this.resumable = await this.bucket.resumableUploadsUnder(
        prefix,
        (key) => this.stored.refOf(key.slice(prefix.length)) >= 0,
      );
    });
  }

  /**
   * The plan's files: the objects stored at their paths are held by their rows there, a size
   * only where it is not the planned one.
   */
  expectFiles(files: ExpectedFiles): void {
    this.stored.expect(files, files);
  }

  /** Objects are durable once their upload returned: only the journal segment is written. */
  async record(files: readonly StagedFile[]): Promise<void> {
    if (files.length === 0) return;
    await this.bucket.call(async () => {
      // An area forgotten underneath (adopted by another attempt) gets no journal of its own.
      await this.sync();
      const entries = files.map((file): JournalEntry => {
        const row = this.stored.refOf(file.path);
        if (row < 0)
          throw new Error(`staging ${this.id}: ${file.path} was not stored by this area`);
        return { ...file, etag: this.stored.etagOf(row) };
      });
      await this.putJournal(entries);
    });
  }

  private async putJournal(entries: readonly JournalEntry[]): Promise<void> {
    await this.bucket.putSmall(
      journalSegmentKey(this.bucket, this.id, this.journalSegments++),
      formatJournal(entries),
    );
  }

  async createObject(relativePath: string, size?: number): Promise<ObjectWriter> {
    const path = checkedRelative(relativePath);
    const key = `${this.prefix}${path}`;
    const resume = this.resumable.get(key);
    this.resumable.delete(key);
    const writer = this.bucket.writer(key, {
      size,
      stored: (object) => this.stored.set(path, object.size, object.etag),
      resume,
    });
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
    const path = checkedRelative(relativePath);
    const key = `${this.prefix}${path}`;
    // A copy replaces whatever upload an earlier attempt left open for the key.
    this.resumable.delete(key);
    return this.bucket.call(async () => {
      const stored = await this.bucket.copyFrom(key, source);
      if (stored !== null) this.stored.set(path, stored.size, stored.etag);
      return stored !== null;
    });
  }

  /**
   * A dataset's object other than its commit object is uploaded at once, in parts as its pieces
   * come (a million files' stored manifest is never held whole). The commit object, and a
   * collection's objects, are publish's: held whole up to one part, else sent in parts now and
   * completed by publish.
   */
  async writeSmallObject(relativePath: string, content: ObjectContent): Promise<void> {
    const path = checkedRelative(relativePath);
    const key = `${this.prefix}${path}`;
    await this.bucket.call(async () => {
      if (
        isDatasetPath(this.target) &&
        `${this.target}/${path}` !== datasetCommitObject(this.target)
      ) {
        // Never over a committed dataset's own (a data file is the job lock's to guard).
        if (await this.bucket.objectExists(this.bucket.key(datasetCommitObject(this.target))))
          throw new TargetExistsError(this.target);
        const writer = this.bucket.writer(key, {
          stored: (object) => this.stored.set(path, object.size, object.etag),
          partsInFlight: ONE_PART_AT_A_TIME,
        });
        await writeAll(writer, contentPieces(content));
        await writer.commit();
        return;
      }
      const held: Buffer[] = [];
      let bytes = 0;
      const pieces = contentPieces(content);
      for (const piece of pieces) {
        held.push(Buffer.from(piece));
        bytes += piece.length;
        if (bytes <= this.bucket.partBytes) continue;
        let stored: StoredObject | undefined;
        const upload = this.bucket.writer(key, {
          stored: (object) => {
            stored = object;
          },
          partsInFlight: ONE_PART_AT_A_TIME,
        });
        await writeAll(upload, held.splice(0), pieces);
        await upload.sendParts();
        this.deferred.push({ path, upload, stored: () => stored });
        return;
      }
      this.deferred.push({ path, content: Buffer.concat(held) });
    });
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
   * Publishes the area at its target: every object it stored is confirmed from a listing
   * compared in order with its columns, then its deferred objects are written (a multipart
   * upload completed), the commit object last. S3 servers without conditional writes (Swift)
   * cannot refuse a second writer of the same key: the import's job lock guarantees one attempt
   * per dataset, and the commit object is checked right before it is written; `committed` is
   * called once it is. Then the area's record and journal go. Runs inside bucket.call.
   */
  async publish(committed: () => void): Promise<void> {
    const path = this.target;
    const commit = this.deferred[this.deferred.length - 1];
    if (!commit) throw new Error(`staging ${this.id} holds no commit object`);
    if (isDatasetPath(path) && `${path}/${commit.path}` !== datasetCommitObject(path))
      throw new Error(`a dataset is committed by ${datasetCommitObject(path)}, not ${commit.path}`);
    await this.sync();
    await this.bucket.confirmListed(this.prefix, this.stored.sorted());
    if (await this.bucket.objectExists(`${this.prefix}${commit.path}`))
      throw new TargetExistsError(path);
    for (const object of this.deferred) {
      if ('upload' in object) {
        await object.upload.commit();
        await this.bucket.confirmObject(object.stored()!);
        continue;
      }
      let stored: StoredObject | undefined;
      const writer = this.bucket.writer(`${this.prefix}${object.path}`, {
        size: object.content.length,
        stored: (s) => {
          stored = s;
        },
      });
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
    if (isDatasetPath(path)) await this.bucket.abortUploadsUnder(this.prefix);
  }
}

/** Writes `held`, then the rest of `pieces`, aborting the upload on a failure. */
async function writeAll(
  writer: S3ObjectWriter,
  held: Iterable<Uint8Array>,
  pieces?: Iterator<Uint8Array>,
): Promise<void> {
  try {
    for (const piece of held) await writer.write(piece);
    if (pieces)
      for (let next = pieces.next(); !next.done; next = pieces.next())
        await writer.write(next.value);
  } catch (error) {
    await writer.abort();
    throw error;
  }
}

/** A relative key below the target: no empty, `.` or `..` segment (preflight refuses them too). */
function checkedRelative(path: string): string {
  if (path.split('/').some((segment) => segment === '' || segment === '.' || segment === '..'))
    throw new Error(`staging path escapes its area: ${path}`);
  return path;
}
