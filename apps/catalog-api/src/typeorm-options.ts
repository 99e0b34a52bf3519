import type { DataSourceOptions } from 'typeorm';
import type { CatalogSettings } from './config/catalog.settings';
import { catalogEntities } from './catalog-entities';
import { catalogMigrations } from './database/migrations';

type DatabaseSettings = Pick<CatalogSettings, 'DATABASE_URL' | 'DATABASE_POOL_SIZE'>;

/**
 * The single source of TypeORM options, used by the app, the migration CLI and the tests, so
 * all three always agree on entities, migrations and naming.
 */
export function buildTypeOrmOptions(settings: DatabaseSettings): DataSourceOptions {
  return {
    type: 'postgres',
    url: settings.DATABASE_URL,
    entities: catalogEntities,
    migrations: catalogMigrations,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    migrationsRun: false,
    synchronize: false,
    uuidExtension: 'pgcrypto',
    applicationName: 'catalog-api',
    connectTimeoutMS: 5000,
    extra: {
      max: settings.DATABASE_POOL_SIZE,
      // A request must never wait forever for a connection or a query.
      connectionTimeoutMillis: 5000,
      statement_timeout: 30000,
    },
  };
}
