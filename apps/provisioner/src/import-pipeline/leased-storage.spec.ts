import type { ObjectWriter, StagingArea, StorageSystem } from '../storage/storage-system';
import { AttemptLease, LeaseLostError, leasedStorage } from './leased-storage';

/** A storage that records what reached it. */
function recordingStorage(calls: string[]): StorageSystem {
  const writer: ObjectWriter = {
    write: () => Promise.resolve(void calls.push('write')),
    commit: () => Promise.resolve(void calls.push('commit')),
    abort: () => Promise.resolve(void calls.push('abort')),
  };
  const area: StagingArea = {
    id: 'a1',
    inherited: [],
    discardExcept: () => Promise.resolve(),
    record: () => Promise.resolve(void calls.push('record')),
    copyLanes: 1,
    copyBufferBytes: 1024,
    createObject: () => Promise.resolve(writer),
    writeSmallObject: () => Promise.resolve(void calls.push('small')),
    createCollection: () => Promise.resolve(),
    sync: () => Promise.resolve(void calls.push('sync')),
  };
  return {
    description: 'recording',
    location: (path) => path,
    exists: () => Promise.resolve(false),
    list: () => Promise.resolve([]),
    readObject: () => Promise.resolve(null),
    ensureCollection: () => Promise.resolve(),
    openStaging: () => Promise.resolve(area),
    removeStaging: () => Promise.resolve(void calls.push('remove')),
    listStaging: () => Promise.resolve([]),
    publish: () => Promise.resolve(void calls.push('publish')),
    freeBytes: () => Promise.resolve(0),
    byteSource: (path) => Promise.resolve({ kind: 'file', file: path }),
  };
}

describe('an attempt writing through the lease on its job lock', () => {
  let now = 0;
  const clock = () => now;

  beforeEach(() => {
    now = 1_000_000;
  });

  it('writes and publishes while renewals are confirmed, renewing on the queue before the commit', async () => {
    const calls: string[] = [];
    const renew = jest.fn(() => Promise.resolve(true));
    const lease = new AttemptLease('imp-1', 10_000, renew, clock);
    const storage = leasedStorage(recordingStorage(calls), lease);
    const area = await storage.openStaging('a1', 'projects/P/S/data/raw/D');
    now += 8000;
    lease.renewed();
    now += 8000;
    await (await area.createObject('f')).write(new Uint8Array(1));
    await area.sync();
    await storage.publish('a1', 'projects/P/S/data/raw/D', { readOnly: true });
    expect(renew).toHaveBeenCalledTimes(1);
    expect(calls).toEqual(['write', 'sync', 'publish']);
  });

  it('stops writing once no renewal was confirmed for a lock duration, and removes nothing', async () => {
    const calls: string[] = [];
    const lease = new AttemptLease('imp-1', 10_000, () => Promise.resolve(true), clock);
    const storage = leasedStorage(recordingStorage(calls), lease);
    const area = await storage.openStaging('a1', 'projects/P/S/data/raw/D');
    const writer = await area.createObject('f');
    now += 10_001;
    await expect(writer.write(new Uint8Array(1))).rejects.toThrow(LeaseLostError);
    await expect(area.sync()).rejects.toThrow(/no renewal of the lock confirmed for 10000 ms/);
    await storage.removeStaging('a1');
    // A late confirmation does not bring a lost lease back.
    lease.renewed();
    await expect(storage.publish('a1', 'x', { readOnly: true })).rejects.toThrow(LeaseLostError);
    expect(calls).toEqual([]);
  });

  it("never publishes when the queue holds another attempt's lock", async () => {
    const calls: string[] = [];
    const lease = new AttemptLease('imp-1', 10_000, () => Promise.resolve(false), clock);
    const storage = leasedStorage(recordingStorage(calls), lease);
    await expect(storage.publish('a1', 'x', { readOnly: true })).rejects.toThrow(
      "import imp-1: this attempt no longer holds the job's lock (the queue holds another attempt's lock, or none)",
    );
    expect(calls).toEqual([]);
  });

  it('is lost at once when told so (a refused renewal, a newer attempt of the job)', async () => {
    const calls: string[] = [];
    const lease = new AttemptLease('imp-1', 10_000, () => Promise.resolve(true), clock);
    const storage = leasedStorage(recordingStorage(calls), lease);
    lease.lose('attempt 3 took the job over');
    await expect(storage.openStaging('a1')).rejects.toThrow(/attempt 3 took the job over/);
    await storage.removeStaging('a1');
    expect(calls).toEqual([]);
  });
});
