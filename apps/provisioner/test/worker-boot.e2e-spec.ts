import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { ImportProcessor } from '../src/import-pipeline/import.processor';
import { ImportJobName } from '../src/imports/import.queue';
import { createProvisionerWorkerApp } from '../src/worker-app';
import { FilesystemStorage } from '../src/storage/filesystem/filesystem-storage';
import { WritePathChoice } from '../src/storage/filesystem/write-path-probe';
import { StorageRegistrationProcessor } from '../src/storage-registration/storage-registration.processor';
import { provisionerTestSettings, queueEnv } from '../../../test/support/provisioner-app';
import { metricSample } from '../../../test/support/prometheus-text';
import { until } from '../../../test/support/wait';
import { tempDir } from './support/dropzone-fixture';

describe('worker boot', () => {
  afterEach(() => jest.restoreAllMocks());

  it('stops, naming the job, when a job name of the imports queue has no handler', async () => {
    const complete = ImportProcessor.prototype.jobHandlers;
    jest.spyOn(ImportProcessor.prototype, 'jobHandlers').mockImplementation(function (
      this: ImportProcessor,
    ) {
      const { [ImportJobName.Sync]: _dropped, ...rest } = complete.call(this);
      return rest as ReturnType<typeof complete>;
    });
    const worker = await createProvisionerWorkerApp(provisionerTestSettings(await queueEnv()));
    try {
      await expect(worker.init()).rejects.toThrow(
        'queue "imports": no handler for job "sync" in its processor',
      );
    } finally {
      await worker.close();
    }
  });

  it('stops, naming the job, when a job name of the registration queue has no handler', async () => {
    jest
      .spyOn(StorageRegistrationProcessor.prototype, 'jobHandlers')
      .mockImplementation(() => ({}) as ReturnType<StorageRegistrationProcessor['jobHandlers']>);
    const worker = await createProvisionerWorkerApp(provisionerTestSettings(await queueEnv()));
    try {
      await expect(worker.init()).rejects.toThrow(
        'queue "catalog-registration": no handler for job "register" in its processor',
      );
    } finally {
      await worker.close();
    }
  });

  it('boots when every job name has a handler', async () => {
    const worker = await createProvisionerWorkerApp(provisionerTestSettings(await queueEnv()));
    try {
      await expect(worker.init()).resolves.toBe(worker);
    } finally {
      await worker.close();
    }
  });

  it('opens its health port before start-up reconciliation, which goes on beside the jobs with its progress in /metrics', async () => {
    const storage = join(tempDir('boot'), 'storage');
    for (let i = 0; i < 30; i++)
      mkdirSync(join(storage, `projects/P${i % 3}/SUB-${i}/data/raw/DS-${i}/.provisioner`), {
        recursive: true,
      });
    // Storage that answers slowly, as a large one does: each collection's listing waits here.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const list = FilesystemStorage.prototype.list;
    jest.spyOn(FilesystemStorage.prototype, 'list').mockImplementation(async function (
      this: FilesystemStorage,
      path: string,
    ) {
      if (path.endsWith('/data/raw')) await released;
      return list.call(this, path);
    });
    const worker = await createProvisionerWorkerApp(
      provisionerTestSettings({ ...(await queueEnv()), STORAGE_ROOT: storage }),
    );
    try {
      await worker.init();
      const http = () => request(worker.getHttpServer());
      const ready = await http().get('/health/ready').expect(200);
      expect(ready.body.checks).toMatchObject({ queue: 'up', workers: 'up' });
      const during = (await http().get('/metrics').expect(200)).text;
      expect(metricSample(during, 'provisioner_reconciliation_running')).toBe(1);
      expect(metricSample(during, 'provisioner_reconciliation_datasets_checked')).toBe(0);
      release();
      const done = async () =>
        metricSample(
          (await http().get('/metrics')).text,
          'provisioner_reconciliation_completed_timestamp_seconds',
        ) !== 0;
      await until(done, 'reconciliation to complete', 20_000, 50);
      const after = (await http().get('/metrics').expect(200)).text;
      expect(metricSample(after, 'provisioner_reconciliation_running')).toBe(0);
      expect(metricSample(after, 'provisioner_reconciliation_datasets_checked')).toBe(30);
      // Each dataset directory holds .provisioner/ but no provenance file.
      expect(metricSample(after, 'provisioner_reconciliation_datasets_without_provenance')).toBe(
        30,
      );
    } finally {
      release();
      await worker.close();
    }
  });

  it('measures the write path (IMPORT_DIRECT_WRITES=auto) as it starts, before any import', async () => {
    const storage = join(tempDir('boot-probe'), 'storage');
    // The choice stands in for the measurement (128 MiB of writes): only when it is asked matters.
    const direct = jest.spyOn(WritePathChoice.prototype, 'direct').mockResolvedValue(false);
    const worker = await createProvisionerWorkerApp(
      provisionerTestSettings({
        ...(await queueEnv()),
        STORAGE_ROOT: storage,
        IMPORT_DIRECT_WRITES: 'auto',
      }),
    );
    try {
      await worker.init();
      await until(() => direct.mock.calls.length > 0, 'the write-path probe', 10_000, 20);
      expect(direct.mock.calls).toEqual([[join(storage, '.staging')]]);
    } finally {
      await worker.close();
    }
  });

  it('is not ready, saying why, once a run loop has stopped taking jobs', async () => {
    const worker = await createProvisionerWorkerApp(provisionerTestSettings(await queueEnv()));
    try {
      await worker.init();
      const http = () => request(worker.getHttpServer());
      await http().get('/health/ready').expect(200);
      await worker.get(ImportProcessor).worker.close();
      await worker.get(StorageRegistrationProcessor).worker.close();
      const refused = await http().get('/health/ready').expect(503);
      expect(refused.body.more.checks).toMatchObject({
        queue: 'up',
        workers: 'down: imports: closed; catalog-registration: closed',
      });
      // Liveness stays: a restart is the orchestrator's call, on readiness and its own limits.
      await http().get('/health/live').expect(200);
    } finally {
      await worker.close();
    }
  });
});
