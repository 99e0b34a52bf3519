import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { runMigrationsWithLock } from '../../apps/catalog-api/src/database/migration-runner';
import { buildTypeOrmOptions } from '../../apps/catalog-api/src/typeorm-options';
import { databaseUrl, testServices, withAdminClient } from './test-services';

/** Serialises template creation and cloning across test workers (CREATE DATABASE ... TEMPLATE
 *  fails while another session uses the template). */
const TEMPLATE_LOCK_ID = 731_104_900;

function uniqueName(kind: string): string {
  return `${testServices().runId}_${kind}_${randomBytes(4).toString('hex')}`;
}

/** A new, empty database of this run; returns its URL. */
export async function createEmptyDatabase(kind = 'db'): Promise<string> {
  const { postgresServerUrl } = testServices();
  const name = uniqueName(kind);
  await withAdminClient(postgresServerUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
  return databaseUrl(postgresServerUrl, name);
}

/**
 * A new database with the catalog schema, cloned from a template migrated once per run, so
 * each test file gets its own catalog in a fraction of a second.
 */
export async function createCatalogDatabase(): Promise<string> {
  const { postgresServerUrl, runId } = testServices();
  const template = `${runId}_catalog_template`;
  const name = uniqueName('catalog');
  await withAdminClient(postgresServerUrl, async (client) => {
    await client.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK_ID]);
    try {
      const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
      if (!rowCount) {
        await client.query(`CREATE DATABASE "${template}"`);
        await migrate(databaseUrl(postgresServerUrl, template));
      }
      await client.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK_ID]);
    }
  });
  return databaseUrl(postgresServerUrl, name);
}

async function migrate(url: string): Promise<void> {
  const dataSource = new DataSource(buildTypeOrmOptions({ DATABASE_URL: url, DATABASE_POOL_SIZE: 2 }));
  await dataSource.initialize();
  try {
    await runMigrationsWithLock(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

/** A queue prefix unique to this test file and run (keys are removed by the global teardown). */
export function uniqueQueuePrefix(): string {
  return uniqueName('q').toLowerCase();
}
