import { DataSource } from 'typeorm';
import { answersHelp, SettingsError } from '@app/platform';
import { logSafeMessage } from '@app/errors';
import { loadCatalogSettings } from '../config/catalog.settings';
import { runMigrationsWithLock } from './migration-runner';
import { buildTypeOrmOptions } from '../typeorm-options';

/**
 * `npm run migrate`, and the Kubernetes migration Job. Exit codes: 0 done, 1 bad settings or a
 * failed migration, 2 the database cannot be reached.
 */
const USAGE = `
Usage: npm run migrate

Applies the catalog's pending migrations to the database of DATABASE_URL, under an advisory
lock, and exits: 0 done, 1 bad settings or a failed migration, 2 the database cannot be reached.
`;

async function main(): Promise<number> {
  if (answersHelp(USAGE)) return 0;
  let dataSource: DataSource;
  try {
    dataSource = new DataSource(buildTypeOrmOptions(loadCatalogSettings()));
  } catch (error) {
    console.error(error instanceof SettingsError ? error.message : error);
    return 1;
  }
  try {
    await dataSource.initialize();
  } catch (error) {
    console.error(`cannot reach the database: ${(error as Error).message}`);
    return 2;
  }
  try {
    const applied = await runMigrationsWithLock(dataSource);
    console.log(
      JSON.stringify({
        msg: 'migrations applied',
        count: applied.length,
        names: applied.map((m) => m.name),
      }),
    );
    return 0;
  } catch (error) {
    console.error(`migration failed: ${logSafeMessage(error)}`);
    return 1;
  } finally {
    await dataSource.destroy();
  }
}

void main().then((code) => process.exit(code));
