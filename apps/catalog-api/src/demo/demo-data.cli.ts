import { DataSource } from 'typeorm';
import { loadCatalogSettings } from '../config/catalog.settings';
import { runMigrationsWithLock } from '../database/migration-runner';
import { buildTypeOrmOptions } from '../database/typeorm-options';
import { formatDemoKeys } from './demo-keys';
import { loadDemoData } from './demo-data.loader';

/** `npm run demo-data`: migrates, loads the demo catalog if absent, prints the demo keys. */
async function main(): Promise<void> {
  const dataSource = new DataSource(buildTypeOrmOptions(loadCatalogSettings()));
  await dataSource.initialize();
  try {
    await runMigrationsWithLock(dataSource);
    const result = await loadDemoData(dataSource);
    console.log(
      result.loaded ? 'Demo catalog loaded.' : 'Demo catalog already present; nothing changed.',
    );
    console.log(formatDemoKeys(result));
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
