import { runMain } from '@app/platform';
import { loadCatalogSettings } from './config/catalog.settings';
import { createCatalogApp } from './http-app';

runMain(async () => {
  const settings = loadCatalogSettings();
  const app = await createCatalogApp(settings);
  await app.listen(settings.PORT, settings.HOST);
});
