import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { metricSample } from '../../../test/support/prometheus-text';
import { until } from '../../../test/support/wait';
import {
  startProvisionerApps,
  ProvisionerTestApps,
  TEST_WRITE_KEY,
} from '../../../test/support/provisioner-app';
import { createProvisionerWorkerApp } from '../src/worker-app';
import type { ImportRecord } from '../src/imports/import-record';
import { DropzoneFixture, tempDir, writeSparseZeros, zeroSha256 } from './support/dropzone-fixture';
import {
  dropzoneEnv,
  TERMINAL_STATES,
  waitForImport,
  waitWhileCopying,
} from './support/provisioner-e2e';

jest.setTimeout(180_000);

const SIZE = 1024 * 1024 * 1024;
/** Copying and hashing 1 GiB on a loaded machine. */
const COPY_WAIT_MS = 120_000;

describe('a second worker replica starting while the first one copies', () => {
  let apps: ProvisionerTestApps;
  let second: NestExpressApplication | undefined;

  afterAll(async () => {
    await second?.close();
    await apps?.close();
  });

  it("leaves the running import's staging alone and removes only dead attempts' staging", async () => {
    const base = tempDir('e2e-replicas');
    const dropzone = new DropzoneFixture(join(base, 'dropzone'));
    const storageRoot = join(base, 'storage');
    dropzone.submission('SUB-BIG', { project: 'PRJ1', datasets: ['DS-BIG'] });
    dropzone.dataset('DS-BIG', { submission: 'SUB-BIG', files: {}, manifestText: { sha256: '' } });
    // A sparse 1 GiB file: long enough to copy for the second replica to start meanwhile.
    writeSparseZeros(join(dropzone.datasetDir('DS-BIG'), 'payload/zeros.bin'), SIZE);
    writeFileSync(
      join(dropzone.datasetDir('DS-BIG'), 'manifest-sha256.txt'),
      `${zeroSha256(SIZE)}  zeros.bin\n`,
    );
    const env = await dropzoneEnv(dropzone, storageRoot);
    apps = await startProvisionerApps(env);
    const res = await request(apps.api.getHttpServer())
      .post('/datasets/dropzone/import')
      .set('X-API-Key', TEST_WRITE_KEY)
      .send({ dataset_id: 'DS-BIG' });
    expect(res.status).toBe(202);
    await waitWhileCopying(
      apps.api,
      res.body.id,
      (r) => r.state === 'running' && r.progress.bytes_done > 0,
      COPY_WAIT_MS,
    );
    // The running attempt's areas: its files, and the submission's new collection once preflight
    // has staged it beside the copy (docs/decisions/collection-staged-while-checking.md).
    const ours = (name: string) => /^dropzone-dataset-DS-BIG~(data|collection)~a1-/.test(name);
    const running = readdirSync(join(storageRoot, '.staging'));
    expect(running).toContainEqual(expect.stringMatching(/^dropzone-dataset-DS-BIG~data~a1-/));
    expect(running.filter((name) => !ours(name))).toEqual([]);
    // What a dead attempt of another import left behind: the new replica must remove it.
    mkdirSync(join(storageRoot, '.staging/dropzone-dataset-GONE~data~a1-dead-0000/sub'), {
      recursive: true,
    });

    second = await createProvisionerWorkerApp(apps.settings);
    await second.init();
    // Its start-up reconciliation runs beside its jobs: done once /metrics says so.
    const server = second.getHttpServer();
    await until(
      async () =>
        metricSample(
          (await request(server).get('/metrics')).text,
          'provisioner_reconciliation_completed_timestamp_seconds',
        ) !== 0,
      'the second replica to reconcile',
      COPY_WAIT_MS,
      20,
    );
    const during = await record(apps.api, res.body.id);
    if (during.state !== 'running')
      throw new Error('the copy finished before the second replica had started');
    // Every area of the running attempt kept (the collection's may have been made meanwhile), the
    // dead attempt's removed.
    const after = readdirSync(join(storageRoot, '.staging'));
    expect(after).toEqual(expect.arrayContaining(running));
    expect(after.filter((name) => !ours(name))).toEqual([]);

    const done = await waitForImport(apps.api, res.body.id, TERMINAL_STATES, COPY_WAIT_MS);
    expect(done).toMatchObject({ state: 'imported', attempts: 1, error: null });
    const published = join(storageRoot, done.path);
    expect(statSync(join(published, 'zeros.bin')).size).toBe(SIZE);
    expect(existsSync(join(published, '.provisioner/provenance.json'))).toBe(true);
    expect(readdirSync(join(storageRoot, '.staging'))).toEqual([]);
  });
});

async function record(api: NestExpressApplication, id: string): Promise<ImportRecord> {
  const res = await request(api.getHttpServer())
    .get(`/imports/${id}`)
    .set('X-API-Key', TEST_WRITE_KEY);
  return res.body as ImportRecord;
}
