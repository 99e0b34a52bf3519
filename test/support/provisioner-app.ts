import type { NestExpressApplication } from '@nestjs/platform-express';
import { loadProvisionerSettings, ProvisionerSettings } from '../../apps/provisioner/src/config/provisioner.settings';
import { createProvisionerApiApp } from '../../apps/provisioner/src/http-app';
import { createProvisionerWorkerApp } from '../../apps/provisioner/src/worker-app';
import { createEmptyDatabase, uniqueQueuePrefix } from './databases';
import { databaseEnv, testServices } from './test-services';

export const TEST_WRITE_KEY = 'test-provisioner-write-key-0123456789abcdef';
export const TEST_READ_KEY = 'test-provisioner-read-key-0123456789abcdef0';

export type QueueBackendChoice = 'redis' | 'postgres';

/** Redis when the run has one, else the Postgres backend; `postgres` forces the latter. */
export async function queueEnv(backend?: QueueBackendChoice): Promise<Record<string, string>> {
  const { redisUrl } = testServices();
  const prefix = uniqueQueuePrefix();
  if (backend !== 'postgres' && redisUrl) return { REDIS_URL: redisUrl, QUEUE_PREFIX: prefix };
  return { ...databaseEnv(await createEmptyDatabase('queue')), QUEUE_PREFIX: prefix };
}

/** Settings like production except for what `env` overrides; logs silent unless TEST_LOG_LEVEL. */
export function provisionerTestSettings(env: Record<string, string>): ProvisionerSettings {
  return loadProvisionerSettings({
    PROVISIONER_API_KEY: TEST_WRITE_KEY,
    PROVISIONER_READ_API_KEYS: TEST_READ_KEY,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // Large files past the page cache, as measured disks mostly choose: the probe behind `auto`
    // (write-path-probe.spec.ts) would write 128 MiB at each test worker's first import.
    IMPORT_DIRECT_WRITES: 'true',
    ...env,
  });
}

export interface ProvisionerTestApps {
  api: NestExpressApplication;
  worker: NestExpressApplication;
  settings: ProvisionerSettings;
  close(): Promise<void>;
}

/** The API and a worker, in this process, sharing one queue (`env` must hold the queue settings). */
export async function startProvisionerApps(env: Record<string, string>): Promise<ProvisionerTestApps> {
  const settings = provisionerTestSettings(env);
  const api = await createProvisionerApiApp(settings);
  await api.init();
  const worker = await createProvisionerWorkerApp(settings);
  await worker.init();
  return {
    api,
    worker,
    settings,
    close: async () => {
      await worker.close();
      await api.close();
    },
  };
}
