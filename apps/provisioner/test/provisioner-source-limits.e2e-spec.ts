import { appendFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { startProvisionerApps, TEST_WRITE_KEY } from '../../../test/support/provisioner-app';
import { DEFAULT_SOURCE_LIMITS } from '../src/config/source-config';
import { DropzoneFixture, tempDir } from './support/dropzone-fixture';
import { dropzoneEnv, waitForImport } from './support/provisioner-e2e';

jest.setTimeout(60_000);

const MiB = 1024 * 1024;

/**
 * The worker's preflight reads a dataset's manifests within the SOURCE_*_MAX_BYTES the
 * deployment sets, as the API's listing does: raised for large datasets, the worker must not
 * refuse what the API showed as ready and queued (202) by the default instead.
 */
describe('source limits in the worker', () => {
  it('imports a dataset whose manifest is past the default SOURCE_MANIFEST_MAX_BYTES but within the raised one', async () => {
    const base = tempDir('e2e-source-limits');
    const dropzone = new DropzoneFixture(join(base, 'dropzone'));
    dropzone
      .submission('SUB-L', { project: 'PRJL', datasets: ['DS-BIG-MANIFEST'] })
      .dataset('DS-BIG-MANIFEST', {
        submission: 'SUB-L',
        files: { 'a.txt': 'alpha\n', 'b/c.txt': 'gamma\n' },
      });
    // Blank lines (skipped by the parser, as sha256sum -c skips none: the size is what counts)
    // take the manifest a little past the default limit.
    const manifest = join(dropzone.datasetDir('DS-BIG-MANIFEST'), 'manifest-sha256.txt');
    const blank = `${' '.repeat(1023)}\n`;
    const lines = Math.ceil((DEFAULT_SOURCE_LIMITS.manifestMaxBytes + MiB) / blank.length);
    for (let written = 0; written < lines; written += 4096)
      appendFileSync(manifest, blank.repeat(Math.min(4096, lines - written)));
    expect(statSync(manifest).size).toBeGreaterThan(DEFAULT_SOURCE_LIMITS.manifestMaxBytes);

    const apps = await startProvisionerApps(
      await dropzoneEnv(dropzone, join(base, 'storage'), {
        SOURCE_MANIFEST_MAX_BYTES: String(DEFAULT_SOURCE_LIMITS.manifestMaxBytes + 8 * MiB),
      }),
    );
    try {
      const res = await request(apps.api.getHttpServer())
        .post('/datasets/dropzone/import')
        .set('X-API-Key', TEST_WRITE_KEY)
        .send({ dataset_id: 'DS-BIG-MANIFEST' });
      expect(res.status).toBe(202);
      const record = await waitForImport(apps.api, res.body.id);
      expect(record).toMatchObject({
        state: 'imported',
        progress: { files_done: 2, files_total: 2 },
      });
    } finally {
      await apps.close();
    }
  });
});
