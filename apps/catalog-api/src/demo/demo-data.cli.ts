import { DataSource } from 'typeorm';
import { loadCatalogSettings } from '../config/catalog.settings';
import { runMigrationsWithLock } from '../database/migration-runner';
import { buildTypeOrmOptions } from '../database/typeorm-options';
import { loadShippedVocabularies } from '../terms/vocabulary-loader';
import { formatDemoKeys } from './demo-keys';
import { loadDemoData } from './demo-data.loader';

/**
 * `npm run demo-data`: migrates, loads the shipped term vocabularies and the demo catalog if
 * absent, prints the demo keys. With `--json` the last line is a JSON summary (for npm start).
 */
async function main(): Promise<void> {
  const json = process.argv.includes('--json');
  const dataSource = new DataSource(buildTypeOrmOptions(loadCatalogSettings()));
  await dataSource.initialize();
  try {
    await runMigrationsWithLock(dataSource);
    const vocabularies = await loadShippedVocabularies(dataSource);
    const result = await loadDemoData(dataSource);
    console.log(
      result.loaded ? 'Demo catalog loaded.' : 'Demo catalog already present; nothing changed.',
    );
    const terms = Object.values(vocabularies).reduce((sum, counts) => sum + counts.total, 0);
    console.log(`Term vocabularies: ${terms} terms.`);
    if (!json) {
      console.log(formatDemoKeys(result));
      return;
    }
    const keys: Record<string, string> = {};
    for (const user of result.users.filter((u) => u.active))
      keys[`user ${user.username}`] = user.apiKey;
    for (const endpoint of result.endpoints) keys[`endpoint ${endpoint.name}`] = endpoint.apiKey;
    console.log(JSON.stringify({ keys }));
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
