import { type Complete, storageReads } from '../storage/storage-decorator';
import type { ObjectWriter, StagingArea, StorageSystem } from '../storage/storage-system';

/**
 * The attempt lost its job's lock: another attempt may own the import now (the lock lapsed while
 * the queue was unreachable longer than IMPORT_LOCK_MS, or the job was handed to a new attempt).
 * It must stop writing to storage and leave the record alone; the owner finishes the import.
 */
export class LeaseLostError extends Error {
  readonly code = 'lease_lost';
  constructor(importId: string, why: string) {
    super(`import ${importId}: this attempt no longer holds the job's lock (${why})`);
    this.name = 'LeaseLostError';
  }
}

/**
 * One attempt's hold on its job's lock, as this process can know it: the lock is renewed by
 * BullMQ (every IMPORT_LOCK_MS / 4) and each renewal confirmed by the queue is a sign of life.
 * With no confirmation for a whole lock duration the lock may have lapsed and the job been
 * given to another attempt, so the attempt counts as lost: on a store without rename (S3) its
 * files land on the dataset's final keys, where only the lock holder may write. Before the
 * commit the hold is checked on the queue itself (`confirm`), which is what decides.
 */
export class AttemptLease {
  private confirmedAt = Date.now();
  private lostBecause: string | null = null;

  constructor(
    readonly importId: string,
    private readonly lockMs: number,
    private readonly renewOnQueue: () => Promise<boolean>,
    private readonly now: () => number = Date.now,
  ) {
    this.confirmedAt = now();
  }

  /** The queue confirmed a renewal of the lock. */
  renewed(): void {
    if (this.lostBecause === null) this.confirmedAt = this.now();
  }

  lose(why: string): void {
    this.lostBecause ??= why;
  }

  /** Throws LeaseLostError once the lock is known, or may be, lost. */
  assertHeld(): void {
    if (this.lostBecause === null && this.now() - this.confirmedAt > this.lockMs)
      this.lostBecause = `no renewal of the lock confirmed for ${this.lockMs} ms`;
    if (this.lostBecause !== null) throw new LeaseLostError(this.importId, this.lostBecause);
  }

  get lost(): boolean {
    try {
      this.assertHeld();
      return false;
    } catch {
      return true;
    }
  }

  /** Renews the lock on the queue and throws LeaseLostError unless this attempt still holds it. */
  async confirm(): Promise<void> {
    this.assertHeld();
    if (!(await this.renewOnQueue())) this.lose("the queue holds another attempt's lock, or none");
    else this.renewed();
    this.assertHeld();
  }
}

function leasedWriter(writer: ObjectWriter, lease: AttemptLease): ObjectWriter {
  const leased: Complete<ObjectWriter> = {
    write: async (chunk) => {
      lease.assertHeld();
      return writer.write(chunk);
    },
    writev:
      writer.writev &&
      (async (chunks) => {
        lease.assertHeld();
        return writer.writev!(chunks);
      }),
    commit: async () => {
      lease.assertHeld();
      return writer.commit();
    },
    abort: () => writer.abort(),
    // Leaves what the store confirmed for the next attempt: no write, so no lease needed.
    suspend: writer.suspend && (() => writer.suspend!()),
    get reusedBytes() {
      return writer.reusedBytes;
    },
    get plaintext() {
      return writer.plaintext;
    },
  };
  return leased;
}

function leasedArea(area: StagingArea, lease: AttemptLease): StagingArea {
  const leased: Complete<StagingArea> = {
    id: area.id,
    inherited: area.inherited,
    localFiles: area.localFiles,
    encryptedLocalFiles: area.encryptedLocalFiles,
    copyLanes: area.copyLanes,
    copyBufferBytes: area.copyBufferBytes,
    expectFiles: area.expectFiles && ((paths) => area.expectFiles!(paths)),
    createObject: async (path, size) => {
      lease.assertHeld();
      return leasedWriter(await area.createObject(path, size), lease);
    },
    copyObjectFrom:
      area.copyObjectFrom &&
      ((path, source) => {
        lease.assertHeld();
        return area.copyObjectFrom!(path, source);
      }),
    writeSmallObject: async (path, content) => {
      lease.assertHeld();
      return area.writeSmallObject(path, content);
    },
    createCollection: async (path) => {
      lease.assertHeld();
      return area.createCollection(path);
    },
    sync: async () => {
      lease.assertHeld();
      return area.sync();
    },
    // A hint that writes nothing new: no lease needed, never thrown.
    flushAhead: area.flushAhead && (() => area.flushAhead!()),
    discardExcept: async (keep) => {
      lease.assertHeld();
      return area.discardExcept(keep);
    },
    record: async (files, objectsOf) => {
      lease.assertHeld();
      return area.record(files, objectsOf);
    },
  };
  return leased;
}

/**
 * The storage one import attempt writes through: every write first checks that the attempt
 * still holds its job's lock (LeaseLostError otherwise), and the publish confirms it on the
 * queue first. An attempt that lost the lock removes nothing: what lies under the dataset's
 * path may by then be the new owner's (on S3 the files are written to their final keys).
 */
export function leasedStorage(storage: StorageSystem, lease: AttemptLease): StorageSystem {
  // Every member named, optional ones too: a member added to StorageSystem and not passed on
  // here is a compile error, not a facet the pipeline silently loses.
  const leased: Complete<StorageSystem> = {
    ...storageReads(storage),
    maxKeyBytes: storage.maxKeyBytes,
    ensureCollection: async (path) => {
      lease.assertHeld();
      return storage.ensureCollection(path);
    },
    openStaging: async (id, target, options) => {
      lease.assertHeld();
      return leasedArea(await storage.openStaging(id, target, options), lease);
    },
    removeStaging: async (id) => {
      if (!lease.lost) await storage.removeStaging(id);
    },
    publish: async (stagingId, path, options) => {
      await lease.confirm();
      return storage.publish(stagingId, path, options);
    },
    // An import never replaces what is published.
    replaceObject: undefined,
    // The worker prepares the store itself, unleased (ImportProcessor.onApplicationBootstrap).
    prepareImports: undefined,
  };
  return leased;
}
