import {
  appendFileSync,
  existsSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import {
  startProvisionerApps,
  ProvisionerTestApps,
  TEST_WRITE_KEY,
} from '../../../test/support/provisioner-app';
import type { ImportRecord } from '../src/imports/import-record';
import { DropzoneFixture, tempDir, writeSparseZeros, zeroSha256 } from './support/dropzone-fixture';
import { poll } from '../../../test/support/wait';
import { dropzoneEnv, TERMINAL_STATES } from './support/provisioner-e2e';

jest.setTimeout(120_000);

/** Sparse, so cheap to create, and long enough to copy for the test to act meanwhile. */
const SIZE = 256 * 1024 * 1024;
/** Two attempts of a 256 MiB copy on a loaded machine. */
const IMPORT_WAIT_MS = 90_000;

describe('a source file changing during the copy (API + worker, Redis, real filesystem)', () => {
  let apps: ProvisionerTestApps;
  let dropzone: DropzoneFixture;
  let storageRoot: string;
  const bigFile = (id: string) => join(dropzone.datasetDir(id), 'payload/zeros.bin');

  beforeAll(async () => {
    const base = tempDir('e2e-source-change');
    dropzone = new DropzoneFixture(join(base, 'dropzone'));
    storageRoot = join(base, 'storage');
    const ids = ['DS-TOUCHED', 'DS-GROWN'];
    dropzone.submission('SUB-1', { project: 'PRJ1', datasets: ids });
    const sha = zeroSha256(SIZE);
    for (const id of ids) {
      dropzone.dataset(id, { submission: 'SUB-1', files: {}, manifestText: { sha256: '' } });
      writeSparseZeros(bigFile(id), SIZE);
      writeFileSync(join(dropzone.datasetDir(id), 'manifest-sha256.txt'), `${sha}  zeros.bin\n`);
    }
    apps = await startProvisionerApps(
      await dropzoneEnv(dropzone, storageRoot, { IMPORT_MAX_ATTEMPTS: '2' }),
    );
  });

  afterAll(async () => {
    await apps?.close();
  });

  /** Starts the import, changes the file once it is being copied, and records every state seen. */
  async function importWhileChanging(
    id: string,
    change: () => void,
  ): Promise<{ done: ImportRecord; seen: ImportRecord[]; violations: string[] }> {
    const finalPath = join(storageRoot, 'projects/PRJ1/SUB-1/data/raw', id);
    const violations: string[] = [];
    // The final path is either absent or complete, at every instant.
    const watcher = setInterval(() => {
      if (!existsSync(finalPath)) return;
      const complete =
        existsSync(join(finalPath, '.provisioner/provenance.json')) &&
        statSync(join(finalPath, 'zeros.bin')).size === SIZE;
      if (!complete) violations.push(`partial content at ${finalPath}`);
    }, 10);
    try {
      const res = await request(apps.api.getHttpServer())
        .post('/datasets/dropzone/import')
        .set('X-API-Key', TEST_WRITE_KEY)
        .send({ dataset_id: id });
      expect(res.status).toBe(202);
      const seen: ImportRecord[] = [];
      let changed = false;
      const done = await poll(
        async () => {
          const record = (
            await request(apps.api.getHttpServer())
              .get(`/imports/${res.body.id}`)
              .set('X-API-Key', TEST_WRITE_KEY)
          ).body as ImportRecord;
          seen.push(record);
          if (!changed && record.state === 'running' && record.progress.bytes_done > 0) {
            change();
            changed = true;
          }
          return TERMINAL_STATES.includes(record.state) ? record : undefined;
        },
        `import ${id} to end`,
        IMPORT_WAIT_MS,
        20,
      );
      return { done, seen, violations };
    } finally {
      clearInterval(watcher);
    }
  }

  it('fails the attempt with source_changed, retries, and publishes the unchanged content', async () => {
    const { done, seen, violations } = await importWhileChanging('DS-TOUCHED', () => {
      const later = new Date(Date.now() + 5_000);
      utimesSync(bigFile('DS-TOUCHED'), later, later);
    });
    // Between the attempts the record is queued (backoff) and says why.
    expect(seen).toContainEqual(
      expect.objectContaining({
        state: 'queued',
        error: expect.objectContaining({ code: 'source_changed' }),
      }),
    );
    expect(done).toMatchObject({ state: 'imported', attempts: 2, error: null });
    const provenance = JSON.parse(
      readFileSync(join(storageRoot, done.path, '.provisioner/provenance.json'), 'utf8'),
    );
    expect(provenance).toMatchObject({ import: { attempt: 2 }, totals: { files: 1, bytes: SIZE } });
    expect(violations).toEqual([]);
    expect(readdirSync(join(storageRoot, '.staging'))).toEqual([]);
  });

  it('a file whose content changed is retried, then rejected on its checksum, publishing nothing', async () => {
    const { done, seen, violations } = await importWhileChanging('DS-GROWN', () =>
      appendFileSync(bigFile('DS-GROWN'), 'late bytes'),
    );
    expect(seen).toContainEqual(
      expect.objectContaining({
        state: 'queued',
        error: expect.objectContaining({ code: 'source_changed' }),
      }),
    );
    expect(done).toMatchObject({
      state: 'rejected',
      attempts: 2,
      error: { code: 'checksum_mismatch' },
    });
    expect(done.error!.details).toEqual([expect.objectContaining({ path: 'zeros.bin' })]);
    expect(existsSync(join(storageRoot, 'projects/PRJ1/SUB-1/data/raw/DS-GROWN'))).toBe(false);
    expect(violations).toEqual([]);
    expect(readdirSync(join(storageRoot, '.staging'))).toEqual([]);
  });
});
