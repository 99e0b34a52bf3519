import type { NestExpressApplication } from '@nestjs/platform-express';
import { setupOpenApi } from '@app/platform';
import type { ProvisionerSettings } from './config/provisioner.settings';
import { ProvisionerApiModule } from './api.module';
import { PROVISIONER_VERSION } from './import-pipeline/provisioner-version';
import { createProvisionerHttpApp } from './provisioner-http-app';
import { configureQueueBackend } from './queue/queue-backend';
import { assertQueueSession } from './queue/queue-session';
import { QUEUE_DASHBOARD_ROUTE } from './queue-dashboard/queue-dashboard.module';

/** The API app without listening: shared by main.ts and the e2e tests. */
export async function createProvisionerApiApp(
  settings: ProvisionerSettings,
): Promise<NestExpressApplication> {
  const backend = configureQueueBackend(settings, 'api');
  await assertQueueSession(backend);
  const app = await createProvisionerHttpApp(
    ProvisionerApiModule.forRoot(settings, backend),
    settings,
    true,
  );
  setupOpenApi(app, {
    title: 'Provisioner API',
    version: PROVISIONER_VERSION,
    path: 'docs',
    links: { queue_dashboard: QUEUE_DASHBOARD_ROUTE },
  });
  return app;
}
