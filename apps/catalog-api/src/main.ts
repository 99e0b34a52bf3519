import './open-telemetry'; // first: see that file
import { listenUntilSignalled, runMain } from '@app/platform';
import { loadCatalogSettings } from './config/catalog.settings';
import { createCatalogApp } from './http-app';

runMain(async () => {
  const settings = loadCatalogSettings();
  const app = await createCatalogApp(settings);
  await listenUntilSignalled(app, settings.PORT, settings.HOST);
});
