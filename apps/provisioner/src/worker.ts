import { runMain } from '@app/platform';
import { loadProvisionerSettings } from './config/provisioner.settings';
import { createProvisionerWorkerApp } from './http-app';

/** The BullMQ worker process: a separate Deployment from the API, scaled on its own. */
runMain(async () => {
  const settings = loadProvisionerSettings();
  const app = await createProvisionerWorkerApp(settings);
  await app.listen(settings.WORKER_HEALTH_PORT, settings.HOST);
});
