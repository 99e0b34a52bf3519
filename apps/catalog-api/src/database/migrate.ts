import { DataSource } from 'typeorm';
import { answersHelp, exitOnStopSignals, SettingsError, StartRefused } from '@app/platform';
import { isDependencyUnavailable, logSafeMessage } from '@app/errors';
import { migrateCatalog } from '../catalog-migration';
import { loadCatalogSettings } from '../config/catalog.settings';
import { buildSessionTypeOrmOptions } from '../typeorm-options';
import { assertSessionDatabase } from './session-database';

/**
 * `npm run migrate`, and the migration Job. Exit codes: 0 done, 1 bad settings or a failed
 * migration, 2 the database cannot be reached, 143 stopped by SIGTERM (130: SIGINT). The Job
 * retries only 2 (its podFailurePolicy): running a failed migration again would fail again, and
 * must stop the rollout instead.
 */
const USAGE = `
Usage: npm run migrate

Applies the catalog's pending migrations to the database of DATABASE_URL (DATABASE_DIRECT_URL
when set), under an advisory lock, then loads the term vocabularies shipped with this release
(unchanged terms are left as they are), and exits. That URL must keep a session (the lock is a
session's): one reaching a pooler in transaction mode (PgBouncer) is refused. Exit codes: 0 done, 1 bad settings or a failed migration,
2 the database cannot be reached, 143 stopped by SIGTERM (130 by SIGINT) before it finished.
`;

const log = (fields: Record<string, unknown>) => console.log(JSON.stringify(fields));

async function main(): Promise<number> {
  if (answersHelp(USAGE)) return 0;
  // Each migration runs in a transaction of its own: when the process ends, the database rolls
  // back the one in progress and releases the lock; the ones before it stay applied.
  exitOnStopSignals({
    message: (signal) =>
      JSON.stringify({
        msg: `migration stopped by ${signal}`,
        detail: 'the migration in progress is rolled back; run the migration again',
      }),
  });
  let dataSource: DataSource;
  let settings: ReturnType<typeof loadCatalogSettings>;
  try {
    settings = loadCatalogSettings();
    dataSource = new DataSource(buildSessionTypeOrmOptions(settings));
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
    // Its advisory lock and time-outs are a session's: never on a transaction-mode pooler.
    await assertSessionDatabase(settings);
    const { migrations, vocabularies } = await migrateCatalog(dataSource, {
      onLockTimeout: (attempt, error, pauseMs) =>
        log({
          msg: 'migration waited too long for a lock; trying again',
          attempt,
          pauseMs,
          error: error.message,
        }),
    });
    log({ msg: 'migrations applied', count: migrations.length, names: migrations });
    log({ msg: 'shipped vocabularies loaded', vocabularies });
    return 0;
  } catch (error) {
    if (error instanceof StartRefused) {
      console.error(error.message);
      return 1;
    }
    if (isDependencyUnavailable(error)) {
      console.error(`lost the database: ${logSafeMessage(error)}`);
      return 2;
    }
    console.error(`migration failed: ${logSafeMessage(error)}`);
    return 1;
  } finally {
    await dataSource.destroy().catch(() => undefined);
  }
}

void main().then((code) => process.exit(code));
