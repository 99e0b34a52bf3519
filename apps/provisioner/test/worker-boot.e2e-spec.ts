import { ImportProcessor } from '../src/import-pipeline/import.processor';
import { ImportJobName } from '../src/imports/import.queue';
import { createProvisionerWorkerApp } from '../src/http-app';
import { provisionerTestSettings, queueEnv } from '../../../test/support/provisioner-app';

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

  it('boots when every job name has a handler', async () => {
    const worker = await createProvisionerWorkerApp(provisionerTestSettings(await queueEnv()));
    try {
      await expect(worker.init()).resolves.toBe(worker);
    } finally {
      await worker.close();
    }
  });
});
