import { NestFactory } from '@nestjs/core';
import { resolve } from 'node:path';
import { DataSource } from 'typeorm';
import { answersHelp, exitOnStopSignals, userDirectory } from '@app/platform';
import { loadCatalogSettings } from '../config/catalog.settings';
import { runMigrationsWithLock } from '../database/migration-runner';
import { buildSessionTypeOrmOptions } from '../typeorm-options';
import { assertSessionDatabase } from '../database/session-database';
import { TermsService } from '../terms/terms.service';
import { demoKeysFromFile, formatDemoKeys } from './demo-keys';
import { loadDemoData } from './demo-data-loader';
import { DemoDataModule } from '../demo-data.module';

/** Where the installation's demo keys are kept unless `--keys-file` says otherwise. */
const DEFAULT_KEYS_FILE = '.data/demo-keys.json';

function keysFileArgument(argv: string[]): string {
  const at = argv.indexOf('--keys-file');
  if (at === -1) return resolve(DEFAULT_KEYS_FILE);
  const file = argv[at + 1];
  if (file === undefined || file.startsWith('--')) throw new Error('--keys-file needs a path');
  return resolve(userDirectory('demo-data'), file);
}

const USAGE = `
Usage: npm run demo-data [-- --keys-file FILE] [--json]

Migrates the database of DATABASE_URL, loads the shipped term vocabularies and, when absent, the
demo catalog, then prints the demo keys (random, made on the first run and kept in FILE, by
default ${DEFAULT_KEYS_FILE}). --json: the last line is a JSON summary.
`;

/**
 * `npm run demo-data [-- --keys-file FILE]`: migrates, loads the shipped term vocabularies and
 * the demo catalog if absent, prints the demo keys. The keys are random, made on the first run
 * and kept in the keys file (default .data/demo-keys.json), so later runs print the same ones.
 * With `--json` the last line is a JSON summary (for npm start). Like `npm run catalog`, it boots
 * the catalog's services without HTTP (those of DemoDataModule) and loads through them.
 */
async function main(): Promise<void> {
  if (answersHelp(USAGE)) return;
  exitOnStopSignals({ message: (signal) => `demo data: stopped by ${signal} before it finished` });
  const json = process.argv.includes('--json');
  const keysFile = keysFileArgument(process.argv);
  // As the catalog tool: silent unless asked, so stdout holds the keys and the summary.
  const settings = loadCatalogSettings({
    ...process.env,
    MIGRATIONS_RUN: 'false',
    LOG_LEVEL: process.env.CLI_LOG_LEVEL ?? 'silent',
  });
  await migrate(settings);
  const { keys, created } = demoKeysFromFile(keysFile);
  // abortOnError off: a failed boot is reported below instead of ending the process silently.
  const app = await NestFactory.createApplicationContext(DemoDataModule.forRoot(settings), {
    logger: false,
    abortOnError: false,
  });
  try {
    const vocabularies = await app.get(TermsService).loadShippedVocabularies();
    const result = await loadDemoData(app, keys);
    console.log(
      result.loaded ? 'Demo catalog loaded.' : 'Demo catalog already present; nothing changed.',
    );
    if (!result.loaded && created) {
      console.warn(
        `Warning: the demo catalog was loaded with keys that are not in ${keysFile}; the keys ` +
          'below do not open it. Give a demo user a new key with `npm run catalog -- rotate-key <username>`, ' +
          'or load the demo into an empty database.',
      );
    }
    const terms = Object.values(vocabularies).reduce((sum, counts) => sum + counts.total, 0);
    console.log(`Term vocabularies: ${terms} terms.`);
    if (!json) {
      console.log(formatDemoKeys(result));
      console.log(`(kept in ${keysFile})`);
      return;
    }
    const summary: Record<string, string> = {};
    for (const user of result.users.filter((u) => u.active))
      summary[`user ${user.username}`] = user.apiKey;
    for (const endpoint of result.endpoints) summary[`endpoint ${endpoint.name}`] = endpoint.apiKey;
    console.log(JSON.stringify({ keys: summary }));
  } finally {
    await app.close();
  }
}

/** Before the services boot: some of them read their tables as they start. */
async function migrate(settings: ReturnType<typeof loadCatalogSettings>): Promise<void> {
  // On the database itself: the migrations' lock is a session's (DATABASE_DIRECT_URL behind a pooler).
  await assertSessionDatabase(settings);
  const dataSource = new DataSource(buildSessionTypeOrmOptions(settings));
  await dataSource.initialize();
  try {
    await runMigrationsWithLock(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

main()
  // Exit explicitly, as the catalog tool does: a scheduler left open must not keep it running.
  .then(() => process.exit(0))
  .catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
