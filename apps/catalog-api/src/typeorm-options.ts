import type { DataSourceOptions } from 'typeorm';
import type { PoolClient } from 'pg';
import type { CatalogSettings } from './config/catalog.settings';
import { catalogEntities } from './catalog-entities';
import { catalogMigrations } from './database/migrations';
import { limitSessionStatements } from './database/database.repository';
import { transactionStatementLimit } from './database/statement-timeouts';

type DatabaseSettings = Pick<CatalogSettings, 'DATABASE_URL' | 'DATABASE_POOL_SIZE'> &
  Partial<Pick<CatalogSettings, 'DATABASE_DIRECT_URL' | 'DATABASE_STATEMENT_TIMEOUT_MS'>>;

/** DATABASE_STATEMENT_TIMEOUT_MS's default. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

/**
 * The single source of TypeORM options, used by the app, the migration CLI and the tests, so
 * all three always agree on entities, migrations and naming.
 *
 * A request must never wait forever for a query, yet the limit is never a startup parameter
 * (PgBouncer refuses those it does not know). On a connection of our own (DATABASE_URL is the
 * database itself) it is the session's, set once as the connection opens. Behind a pooler in
 * transaction mode (DATABASE_DIRECT_URL set) a session belongs to nobody, so every transaction
 * sets its own (`SET LOCAL`); statements outside one get the pooler's limit (docs/operations.md).
 */
export function buildTypeOrmOptions(settings: DatabaseSettings): DataSourceOptions {
  const statementMs = settings.DATABASE_STATEMENT_TIMEOUT_MS ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const pooled = settings.DATABASE_DIRECT_URL !== undefined;
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
    subscribers: pooled ? [transactionStatementLimit(statementMs)] : [],
    extra: {
      max: settings.DATABASE_POOL_SIZE,
      // A request must never wait forever for a connection either.
      connectionTimeoutMillis: 5000,
      ...(pooled
        ? {}
        : { onConnect: (client: PoolClient) => limitSessionStatements(client, statementMs) }),
    },
  };
}

/**
 * The options of a data source for work that needs a session of its own (migrations under their
 * advisory lock): on the database itself, DATABASE_DIRECT_URL when DATABASE_URL names a pooler.
 */
export function buildSessionTypeOrmOptions(
  settings: Pick<CatalogSettings, 'sessionDatabaseUrl' | 'DATABASE_STATEMENT_TIMEOUT_MS'>,
): DataSourceOptions {
  return buildTypeOrmOptions({
    DATABASE_URL: settings.sessionDatabaseUrl,
    // The migration runner holds two: its lock's and the migrations'.
    DATABASE_POOL_SIZE: 2,
    DATABASE_STATEMENT_TIMEOUT_MS: settings.DATABASE_STATEMENT_TIMEOUT_MS,
  });
}
