import type { StagedFile, StagingArea } from '../storage/storage-system';
import type { CopyResult } from './hashing-copy';
import type { PlannedFile } from './preflight';

/**
 * A file changed this recently may change again within one tick of a coarse file-system clock
 * (NFS, some FUSE mounts: a second) without its times moving: not recorded for reuse.
 */
export const RECENT_CHANGE_MS = 2000;
/**
 * Copied files are recorded within this long (a kill loses at most this much finished copying
 * besides the files in flight), each time with one flush of the storage (syncfs), so not more
 * often: ...
 */
const RECORD_INTERVAL_MS = 1000;
/** ...unless this many bytes or files are waiting to be recorded. */
const RECORD_BYTES = 256 * 1024 * 1024;
const RECORD_FILES = 10_000;

/**
 * The planned files an earlier attempt staged that this one keeps, by plan index: the staged
 * copy is still the one recorded (the storage checked its size, and on S3 its ETag), the source
 * file is the one it was copied from (inode, size, modification and change times: a file
 * rewritten, replaced or touched since is copied again) and the checksums computed while it was
 * copied are the ones the manifest now lists. The device is not compared: another node mounts
 * the same share under another device number.
 */
export function keptFiles(
  files: readonly PlannedFile[],
  inherited: readonly StagedFile[],
): Map<number, StagedFile> {
  const staged = new Map(inherited.map((file) => [file.path, file]));
  const kept = new Map<number, StagedFile>();
  files.forEach((file, index) => {
    const earlier = staged.get(file.path);
    if (earlier && stillTheSame(file, earlier)) kept.set(index, earlier);
  });
  return kept;
}

function stillTheSame(file: PlannedFile, staged: StagedFile): boolean {
  const { source } = staged;
  return (
    staged.size === file.size &&
    source.size === file.size &&
    source.ino === file.ino &&
    source.mtimeMs === file.mtimeMs &&
    source.ctimeMs === file.ctimeMs &&
    (file.expected.sha256 === undefined || file.expected.sha256 === staged.sha256) &&
    (file.expected.md5 === undefined || file.expected.md5 === staged.md5)
  );
}

/** What a kept file contributes to the verification and the provenance: what its copy computed. */
export function resultOfKept(staged: StagedFile): CopyResult {
  return { size: staged.size, sha256: staged.sha256, md5: staged.md5, source: staged.source };
}

/**
 * Records the files an attempt has copied into its staging area (StagingArea.record) in batches,
 * in the background while the copy goes on: RECORD_INTERVAL_MS after the last batch, sooner
 * past RECORD_BYTES or RECORD_FILES, and at the end (flush). A batch that cannot be recorded
 * only costs a later attempt the copy of its files again; it never fails this one.
 */
export class StagedFilesRecorder {
  private pending: StagedFile[] = [];
  private pendingBytes = 0;
  private lastRecorded = Date.now();
  private recording: Promise<void> | null = null;
  private timer: NodeJS.Timeout | undefined;
  /** Files whose record is durable. */
  recordedFiles = 0;

  constructor(
    private readonly staging: StagingArea,
    private readonly recentChangeMs = RECENT_CHANGE_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** A file copied and committed; skipped when its source changed too recently to be trusted. */
  copied(path: string, result: CopyResult): void {
    const { source } = result;
    if (this.now() - Math.max(source.ctimeMs, source.mtimeMs) < this.recentChangeMs) return;
    this.pending.push({ path, sha256: result.sha256, md5: result.md5, size: result.size, source });
    this.pendingBytes += result.size;
    if (this.pendingBytes >= RECORD_BYTES || this.pending.length >= RECORD_FILES)
      void this.recordPending();
    else this.schedule();
  }

  /** Records what is pending RECORD_INTERVAL_MS after the last batch, whether files finish or not. */
  private schedule(): void {
    if (this.timer || this.recording) return;
    const due = this.lastRecorded + RECORD_INTERVAL_MS - this.now();
    if (due <= 0) {
      void this.recordPending();
      return;
    }
    this.timer = setTimeout(() => void this.recordPending(), due);
    this.timer.unref();
  }

  /** Waits for the batch being recorded, then records what is left. */
  async flush(): Promise<void> {
    while (this.recording) await this.recording;
    if (this.pending.length > 0) await this.recordPending();
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private recordPending(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.recording) return this.recording;
    if (this.pending.length === 0) return Promise.resolve();
    const batch = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    this.lastRecorded = this.now();
    this.recording = this.staging
      .record(batch)
      .then(
        () => void (this.recordedFiles += batch.length),
        () => undefined,
      )
      .finally(() => {
        this.recording = null;
        if (this.pending.length > 0) this.schedule();
      });
    return this.recording;
  }
}
