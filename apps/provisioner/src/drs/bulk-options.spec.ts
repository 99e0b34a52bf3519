import type { Queue } from 'bullmq';
import { loadProvisionerSettings, type ProvisionerSettings } from '../config/provisioner.settings';
import type { ImportRecordsRepository } from '../imports/import-records.repository';
import type { StorageSystem } from '../storage/storage-system';
import { DrsError } from './drs-errors';
import { DrsService, MAX_ANONYMOUS_DATASETS } from './drs.service';
import { StoredDatasets } from './stored-datasets';
import { TrailEmitter } from '../trail/trail-emitter';

/**
 * An anonymous bulk OPTIONS of 1,000 unknown ids once made 1,000 storage reads, one at a time
 * (23 s against a local S3 server): the work it may cause is bounded by the datasets it names.
 */
describe('bulk OPTIONS /objects: the work an anonymous request can cause', () => {
  const settings = loadProvisionerSettings({
    REDIS_URL: 'redis://redis:6379',
    DRS_PUBLIC_URL: 'https://drs.example.org',
    DRS_VISA_ISSUER: 'https://catalog.example.org',
    CATALOG_URL: 'https://catalog.example.org',
    DRS_CATALOG_BROKER_KEY: 'b'.repeat(40),
  }).drsSettings;
  let reads: string[];
  let inFlight: number;
  let most: number;
  const storage = {
    // Nothing is published: every provenance is absent, after a moment (a store's round trip).
    readObject: async (path: string) => {
      reads.push(path);
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight -= 1;
      return null;
    },
  } as unknown as StorageSystem;
  const service = new DrsService(
    settings,
    storage,
    new StoredDatasets(storage, {} as ImportRecordsRepository, settings),
    // No catalog configured: the emitter records nothing and never touches its queue.
    new TrailEmitter({} as Queue, { catalogRegistration: null } as ProvisionerSettings),
    null,
  );
  beforeEach(() => {
    reads = [];
    inFlight = 0;
    most = 0;
  });

  it('1,000 unknown ids of 1,000 datasets: 413 before any storage read', async () => {
    const ids = Array.from({ length: 1000 }, (_, i) => `P~S~DS-${i}`);
    const refused = await service.bulkAuthorizations(ids).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DrsError);
    expect(refused).toMatchObject({ status: 413, code: 'too_many_datasets' });
    expect(reads).toEqual([]);
  });

  it('1,000 ids of a few datasets: one small read per dataset, several at a time', async () => {
    const ids = Array.from(
      { length: 1000 },
      (_, i) => `P~S~DS-${i % MAX_ANONYMOUS_DATASETS}~${(i % 7).toString().padStart(20, '0')}`,
    );
    const answer = await service.bulkAuthorizations(ids);
    expect(answer.summary).toEqual({ requested: 1000, resolved: 0, unresolved: 1000 });
    expect(reads).toHaveLength(MAX_ANONYMOUS_DATASETS);
    expect(new Set(reads).size).toBe(MAX_ANONYMOUS_DATASETS);
    expect(most).toBeGreaterThan(1);
  });

  it('ids that name no dataset cost nothing', async () => {
    const answer = await service.bulkAuthorizations(['..', 'a~b', '%2e~x~y', 'P~S~D~nothex']);
    expect(answer.summary.unresolved).toBe(4);
    expect(reads).toEqual([]);
  });
});
