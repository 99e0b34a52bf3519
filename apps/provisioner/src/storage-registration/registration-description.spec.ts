import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../test/support/dropzone-fixture';
import { FilesystemStorage } from '../storage/filesystem/filesystem-storage';
import { provenanceText } from '../storage/provenance';
import type { ByteRange, StorageSystem } from '../storage/storage-system';
import { describeRegistration } from './registration-description';

const FILES = 120_000;
const DATASET = 'P1/SUB-1/data/raw/DS-BIG';

describe('describeRegistration of a dataset of many files', () => {
  // Its time-out: writing and hashing a 120,000-file manifest takes ~1 s alone, several under load.
  it('reads the head of the provenance and hashes the stored manifest a piece at a time', async () => {
    const root = tempDir('registration');
    const fileAt = (i: number) => ({
      path: `sample-${i % 20}/f-${String(i).padStart(7, '0')}.dat`,
      size: 4096,
      sha256: createHash('sha256').update(String(i)).digest('hex'),
    });
    const provenance = provenanceText(
      {
        format: 'provisioner-provenance/1',
        source: { name: 'dropzone', type: 'dropzone' },
        submission: { ref: 'SUB-1', project: 'P1' },
        dataset: { dataset_id: 'DS-BIG', title: 'Many files', metadata: {} },
        import: {
          id: 'imp-big',
          attempt: 1,
          queued_at: null,
          started_at: '2026-11-25T00:00:00.000Z',
          staged_at: '2026-11-25T00:10:00.000Z',
        },
        versions: { provisioner: 'test' },
        totals: { files: FILES, bytes: FILES * 4096 },
        verification: { result: 'passed', manifests: ['sha256'], computed: ['sha256'] },
      },
      FILES,
      fileAt,
    );
    const manifest = Buffer.from(
      Array.from({ length: FILES }, (_, i) => `${fileAt(i).sha256}  ${fileAt(i).path}\n`).join(''),
    );
    // Both larger than the pieces they are read in (64 KiB and 8 MiB).
    expect(provenance.length).toBeGreaterThan(16 * 1024 * 1024);
    expect(manifest.length).toBeGreaterThan(8 * 1024 * 1024);
    mkdirSync(join(root, DATASET, '.provisioner'), { recursive: true });
    writeFileSync(join(root, DATASET, '.provisioner/provenance.json'), provenance);
    writeFileSync(join(root, DATASET, '.provisioner/manifest-sha256.txt'), manifest);

    const storage = new FilesystemStorage(root);
    const reads: { path: string; range?: ByteRange }[] = [];
    const counting = Object.assign(Object.create(storage) as StorageSystem, {
      readObject: (path: string, range?: ByteRange) => {
        reads.push({ path, range });
        return storage.readObject(path, range);
      },
    });
    const registration = await describeRegistration(
      counting,
      'imp-big',
      DATASET,
      'filesystem',
      '2026-11-25',
    );
    expect(registration).toMatchObject({
      import_id: 'imp-big',
      dataset: { title: 'Many files', project: 'P1' },
      storage: {
        bytes: FILES * 4096,
        manifest_sha256: createHash('sha256').update(manifest).digest('hex'),
      },
    });
    // Nothing read whole but the collection's submission.json (absent here); no piece past 8 MiB.
    const whole = reads.filter((r) => !r.range).map((r) => r.path);
    expect(whole).toEqual(['projects/P1/SUB-1/submission.json']);
    expect(Math.max(...reads.map((r) => r.range?.length ?? 0))).toBe(8 * 1024 * 1024);
    const provenanceReads = reads.filter((r) => r.path.endsWith('provenance.json'));
    expect(provenanceReads).toEqual([
      { path: `${DATASET}/.provisioner/provenance.json`, range: { start: 0, length: 64 * 1024 } },
    ]);
  }, 60_000);
});
