import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { loadCatalogSettings } from '../../apps/catalog-api/src/config/catalog.settings';
import { createCatalogApp } from '../../apps/catalog-api/src/http-app';
import { createCatalogDatabase } from './databases';

export const TEST_GLOBAL_KEY = 'test-global-key-0123456789abcdef0123456789';

export interface CatalogTestApp {
  app: NestExpressApplication;
  /** Pass to supertest: `request(t.server)`. */
  server: ReturnType<NestExpressApplication['getHttpServer']>;
  dataSource: DataSource;
  databaseUrl: string;
  close(): Promise<void>;
}

/**
 * A catalog app configured like production except for what `env` overrides, on its own freshly
 * migrated database unless `existingDatabaseUrl` names one (so a test file can run several
 * differently configured apps over the same data). Logs are silent unless TEST_LOG_LEVEL is set.
 */
export async function startCatalogApp(
  env: Record<string, string> = {},
  existingDatabaseUrl?: string,
): Promise<CatalogTestApp> {
  const databaseUrl = existingDatabaseUrl ?? (await createCatalogDatabase());
  const settings = loadCatalogSettings({
    DATABASE_URL: databaseUrl,
    GLOBAL_API_KEY: TEST_GLOBAL_KEY,
    CATALOG_SOURCE: 'https://catalog.test',
    MIGRATIONS_RUN: 'false',
    DATABASE_POOL_SIZE: '4',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...env,
  });
  const app = await createCatalogApp(settings);
  await app.init();
  return {
    app,
    server: app.getHttpServer(),
    dataSource: app.get(DataSource),
    databaseUrl,
    close: () => app.close(),
  };
}
