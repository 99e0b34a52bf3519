import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { loadCatalogSettings } from '../../apps/catalog-api/src/config/catalog.settings';
import { CatalogVersionRepository } from '../../apps/catalog-api/src/catalog-version/catalog-version.repository';
import { CatalogVersionTracker } from '../../apps/catalog-api/src/catalog-version/catalog-version-tracker';
import { createCatalogApp } from '../../apps/catalog-api/src/http-app';
import { createCatalogDatabase } from './databases';
import { databaseEnv } from './test-services';
import { until } from './wait';

export const TEST_GLOBAL_KEY = 'test-global-key-0123456789abcdef0123456789';

export interface CatalogTestApp {
  app: NestExpressApplication;
  /** Pass to supertest: `request(t.server)`. */
  server: ReturnType<NestExpressApplication['getHttpServer']>;
  dataSource: DataSource;
  databaseUrl: string;
  /**
   * Resolves once the app knows the database's current data version. Writes made behind the
   * app's back (SQL in a test, like the CLI or another replica) reach it by notification a few
   * milliseconds after commit; a test that reads right after such a write waits for this first.
   */
  versionSettled(): Promise<void>;
  close(): Promise<void>;
}

/** Polls until the app's version tracker holds the version the database has now. */
export function waitForVersion(app: NestExpressApplication, dataSource: DataSource): Promise<void> {
  const tracker = app.get(CatalogVersionTracker);
  const versions = app.get(CatalogVersionRepository);
  return until(
    async () => tracker.known() === (await versions.current(dataSource.manager)),
    "the app's version tracker to know the database's version",
  );
}

/**
 * A catalog app configured like production except for what `env` overrides, on its own freshly
 * migrated database unless `existingDatabaseUrl` names one (so a test file can run several
 * differently configured apps over the same data); behind the run's PgBouncer when it has one
 * (TEST_PGBOUNCER=on). Logs are silent unless TEST_LOG_LEVEL is set.
 */
export async function startCatalogApp(
  env: Record<string, string> = {},
  existingDatabaseUrl?: string,
): Promise<CatalogTestApp> {
  const databaseUrl = existingDatabaseUrl ?? (await createCatalogDatabase());
  const settings = loadCatalogSettings({
    ...databaseEnv(databaseUrl),
    GLOBAL_API_KEY: TEST_GLOBAL_KEY,
    CATALOG_SOURCE: 'https://catalog.test',
    MIGRATIONS_RUN: 'false',
    DATABASE_POOL_SIZE: '4',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // No webhook sender polling the outbox in the background (the webhooks' tests turn it on):
    // tests that count an answer's queries see only the answer's.
    WEBHOOK_DELIVERY: 'false',
    ...env,
  });
  const app = await createCatalogApp(settings);
  await app.init();
  const dataSource = app.get(DataSource);
  return {
    app,
    server: app.getHttpServer(),
    dataSource,
    databaseUrl,
    versionSettled: () => waitForVersion(app, dataSource),
    close: () => app.close(),
  };
}
