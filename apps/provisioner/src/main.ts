import './api-open-telemetry'; // first: see that file
import { listenUntilSignalled, runMain } from '@app/platform';
import { loadProvisionerSettings } from './config/provisioner.settings';
import { createProvisionerApiApp } from './http-app';

runMain(async () => {
  const settings = loadProvisionerSettings();
  const app = await createProvisionerApiApp(settings);
  await listenUntilSignalled(app, settings.PORT, settings.HOST);
});
