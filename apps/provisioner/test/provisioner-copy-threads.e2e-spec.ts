import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { startProvisionerApps, TEST_WRITE_KEY } from '../../../test/support/provisioner-app';
import type { ImportRecord } from '../src/imports/import-record';
import { CopyThreadPool } from '../src/import-pipeline/copying';
import { digest, DropzoneFixture, tempDir } from './support/dropzone-fixture';
import { dropzoneEnv, waitForImport } from './support/provisioner-e2e';

jest.setTimeout(60_000);

/** 400 small files in four directories and one of 100 KB. */
function files(seed: string): Record<string, string | Buffer> {
  const all: Record<string, string | Buffer> = {
    'large/over-threshold.bin': Buffer.alloc(100_000, 5),
  };
  for (let i = 0; i < 400; i++)
    all[`lane-${i % 4}/sample-${i}.txt`] = `${seed} sample ${i}\n`.repeat(1 + (i % 50));
  return all;
}

/**
 * The worker copies every file on IMPORT_COPY_THREADS worker threads: the app as deployed
 * (API + worker in this process, Redis, real filesystem), with threads and with 0.
 */
describe('copy threads in the worker (IMPORT_COPY_THREADS)', () => {
  let dropzone: DropzoneFixture;
  let storageRoot: string;

  beforeAll(() => {
    const base = tempDir('e2e-copy-threads');
    dropzone = new DropzoneFixture(join(base, 'dropzone'));
    storageRoot = join(base, 'storage');
    dropzone.submission('SUB-T', { project: 'PRJT', datasets: ['DS-THREADS', 'DS-MAIN'] });
    dropzone.dataset('DS-THREADS', {
      submission: 'SUB-T',
      files: files('threads'),
      manifests: ['sha256', 'md5'],
    });
    dropzone.dataset('DS-MAIN', { submission: 'SUB-T', files: files('main') });
  });

  /**
   * The import's record, the worker's copy-thread pool (closed with the worker by then) and how
   * many threads it had just before the worker closed.
   */
  async function importWith(
    threads: string,
    datasetId: string,
  ): Promise<{ record: ImportRecord; pool: CopyThreadPool; threadsAtClose: number }> {
    const apps = await startProvisionerApps(
      await dropzoneEnv(dropzone, storageRoot, { IMPORT_COPY_THREADS: threads }),
    );
    const pool = apps.worker.get(CopyThreadPool);
    let threadsAtClose = -1;
    try {
      const res = await request(apps.api.getHttpServer())
        .post('/datasets/dropzone/import')
        .set('X-API-Key', TEST_WRITE_KEY)
        .send({ dataset_id: datasetId });
      expect(res.status).toBe(202);
      const record = await waitForImport(apps.api, res.body.id);
      threadsAtClose = pool.threadCount;
      return { record, pool, threadsAtClose };
    } finally {
      await apps.close();
    }
  }

  function expectPublished(record: ImportRecord, content: Record<string, string | Buffer>): void {
    expect(record).toMatchObject({
      state: 'imported',
      attempts: 1,
      progress: { files_done: 401, files_total: 401 },
    });
    const dir = join(storageRoot, record.path!);
    const provenance = JSON.parse(readFileSync(join(dir, '.provisioner/provenance.json'), 'utf8'));
    const recorded = new Map(
      (provenance.files as { path: string; sha256: string }[]).map((f) => [f.path, f.sha256]),
    );
    expect(recorded.size).toBe(401);
    for (const [path, bytes] of Object.entries(content)) {
      expect(recorded.get(path)).toBe(digest('sha256', bytes));
      expect(digest('sha256', readFileSync(join(dir, path)))).toBe(digest('sha256', bytes));
      expect(statSync(join(dir, path)).mode & 0o222).toBe(0);
    }
  }

  it('copies on the threads, verified against both manifests, and ends them when the worker closes', async () => {
    const { record, pool, threadsAtClose } = await importWith('2', 'DS-THREADS');
    expectPublished(record, files('threads'));
    const provenance = JSON.parse(
      readFileSync(join(storageRoot, record.path!, '.provisioner/provenance.json'), 'utf8'),
    );
    expect(provenance.verification).toMatchObject({ manifests: ['sha256', 'md5'] });
    // 400 small files in batches of at most 128: at least four batches went to the threads.
    expect(pool.batchesRun).toBeGreaterThanOrEqual(4);
    // The worker's shutdown ended the threads (an app restarted in one process keeps none).
    expect(threadsAtClose).toBe(2);
    expect(pool.threadCount).toBe(0);
  });

  it('starts the copy threads when the worker boots, before its first import', async () => {
    const apps = await startProvisionerApps(
      await dropzoneEnv(dropzone, storageRoot, { IMPORT_COPY_THREADS: '2' }),
    );
    try {
      const pool = apps.worker.get(CopyThreadPool);
      expect(pool.threadCount).toBe(2);
      expect(pool.batchesRun).toBe(0);
    } finally {
      await apps.close();
    }
  });

  it('with IMPORT_COPY_THREADS=0 copies on the main thread and starts no thread', async () => {
    const { record, pool } = await importWith('0', 'DS-MAIN');
    expectPublished(record, files('main'));
    expect(pool.batchesRun).toBe(0);
    expect(pool.threadCount).toBe(0);
  });
});
