import { runMain } from '@app/platform';
import { loadProvisionerSettings } from './config/provisioner.settings';
import { createProvisionerApiApp } from './http-app';

runMain(async () => {
  const settings = loadProvisionerSettings();
  const app = await createProvisionerApiApp(settings);
  await app.listen(settings.PORT, settings.HOST);
});
