import type { NestExpressApplication } from '@nestjs/platform-express';
import type { ProvisionerSettings } from './config/provisioner.settings';
import { createProvisionerHttpApp } from './provisioner-http-app';
import { configureQueueBackend } from './queue/queue-backend';
import { assertQueueSession } from './queue/queue-session';
import { ProvisionerWorkerModule } from './worker.module';

/** The worker app (health server plus queue worker) without listening. */
export async function createProvisionerWorkerApp(
  settings: ProvisionerSettings,
): Promise<NestExpressApplication> {
  const backend = configureQueueBackend(settings, 'worker');
  await assertQueueSession(backend);
  return createProvisionerHttpApp(ProvisionerWorkerModule.forRoot(settings, backend), settings);
}
