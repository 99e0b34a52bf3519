import './worker-open-telemetry'; // first: see that file
import { runMain } from '@app/platform';
import { loadProvisionerSettings } from './config/provisioner.settings';
import { createProvisionerWorkerApp } from './worker-app';
import { stopWithoutQueue } from './import-pipeline/stop-without-queue';

/** The BullMQ worker process: a separate Deployment from the API, scaled on its own. */
runMain(async () => {
  const settings = loadProvisionerSettings();
  const app = await createProvisionerWorkerApp(settings);
  // At SIGTERM the app closes at once (the queue worker finishes or hands back its jobs); the
  // health port serves no traffic to drain. Exit 0 once closed: Nest would re-raise the signal.
  app.enableShutdownHooks([], { useProcessExit: true });
  // Unless the queue cannot be reached: then nothing can be handed back, and it stops at once.
  stopWithoutQueue(app);
  await app.listen(settings.WORKER_HEALTH_PORT, settings.HOST);
});
