import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import request from 'supertest';
import {
  ProvisionerTestApps,
  startProvisionerApps,
  TEST_WRITE_KEY,
} from '../../../test/support/provisioner-app';
import { IMPORTS_QUEUE } from '../src/imports/import.queue';
import { digest, DropzoneFixture, tempDir } from './support/dropzone-fixture';
import { dropzoneEnv, waitForImport } from './support/provisioner-e2e';

const MAX_FILES = 1000;
const files = (count: number) =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`d/${i}.txt`, `${i}`]));

/**
 * What a worker's imports hold at once is bounded in files (IMPORT_MAX_FILES; the memory bound
 * itself is test/robustness/worker-memory.robust-spec.ts): a dataset of more files than that is
 * refused at the request and at preflight; two that fit only one after the other both import.
 */
describe('IMPORT_MAX_FILES: the files a worker holds at once', () => {
  let apps: ProvisionerTestApps;
  let dropzone: DropzoneFixture;
  const post = (id: string) =>
    request(apps.api.getHttpServer())
      .post('/datasets/dropzone/import')
      .set('X-API-Key', TEST_WRITE_KEY)
      .send({ dataset_id: id });

  beforeAll(async () => {
    dropzone = new DropzoneFixture(join(tempDir('file-budget'), 'dropzone'));
    dropzone.submission('SUB-1', {
      project: 'P1',
      datasets: ['DS-TOO-MANY', 'DS-GROWS', 'DS-A', 'DS-B'],
    });
    dropzone.dataset('DS-TOO-MANY', { submission: 'SUB-1', files: files(MAX_FILES + 1) });
    dropzone.dataset('DS-GROWS', { submission: 'SUB-1', files: files(2) });
    dropzone.dataset('DS-A', { submission: 'SUB-1', files: files(600) });
    dropzone.dataset('DS-B', { submission: 'SUB-1', files: files(600) });
    apps = await startProvisionerApps(
      await dropzoneEnv(dropzone, join(dropzone.root, '../storage'), {
        IMPORT_MAX_FILES: String(MAX_FILES),
      }),
    );
  });

  afterAll(() => apps?.close());

  it('refuses at the request a dataset of more files than a worker holds at once', async () => {
    const res = await post('DS-TOO-MANY');
    expect(res.status).toBe(409);
    expect(res.body.more).toMatchObject({ reason: 'too_many_files' });
    expect(res.body.description).toContain('lists 1001 files, more than one worker holds at once');
  });

  it('rejects at preflight one that grew past it after the request, without retrying', async () => {
    const queue = apps.api.get<Queue>(getQueueToken(IMPORTS_QUEUE));
    await queue.pause();
    try {
      expect((await post('DS-GROWS')).status).toBe(202);
      const dir = dropzone.datasetDir('DS-GROWS');
      for (let i = 2; i <= MAX_FILES; i++) {
        writeFileSync(join(dir, 'payload/d', `${i}.txt`), `${i}`);
        appendFileSync(
          join(dir, 'manifest-sha256.txt'),
          `${digest('sha256', `${i}`)}  d/${i}.txt\n`,
        );
      }
    } finally {
      await queue.resume();
    }
    const record = await waitForImport(apps.api, 'dropzone-dataset-DS-GROWS');
    expect(record).toMatchObject({
      state: 'rejected',
      attempts: 1,
      error: { code: 'too_many_files', message: expect.stringContaining('IMPORT_MAX_FILES: 1000') },
    });
  });

  it('imports two datasets that fit only one after the other', async () => {
    const ids = await Promise.all(['DS-A', 'DS-B'].map(async (id) => (await post(id)).body.id));
    for (const id of ids)
      expect(await waitForImport(apps.api, id)).toMatchObject({ state: 'imported', error: null });
  });
});
