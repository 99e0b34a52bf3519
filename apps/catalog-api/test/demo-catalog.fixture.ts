import { NestFactory } from '@nestjs/core';
import request from 'supertest';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';
import { hashApiKey } from '@app/auth';
import {
  CatalogTestApp,
  startCatalogApp,
  TEST_GLOBAL_KEY,
} from '../../../test/support/catalog-app';
import { loadCatalogSettings } from '../src/config/catalog.settings';
import { DatasetExportsRefresher } from '../src/datasets/dataset-exports-refresher';
import { DemoKeys, generateDemoKeys } from '../src/demo/demo-keys';
import { loadDemoData } from '../src/demo/demo-data-loader';
import { DemoDataModule } from '../src/demo-data.module';

/** A 64-character key of an endpoint that has no exposure at all. */
export const UNEXPOSED_ENDPOINT_KEY = 'u'.repeat(64);

/** The demo keys of this test file: random, like those of every installation. */
export const DEMO_KEYS: DemoKeys = generateDemoKeys();

const userKey = (username: string): string => {
  const key = DEMO_KEYS.users.find((u) => u.username === username)?.apiKey;
  if (key === undefined) throw new Error(`demo user ${username} has no key`);
  return key;
};
const endpointKey = (name: string): string => {
  const key = DEMO_KEYS.endpoints.find((e) => e.name === name)?.apiKey;
  if (key === undefined) throw new Error(`demo endpoint ${name} has no key`);
  return key;
};

export const KEYS = {
  global: TEST_GLOBAL_KEY,
  /** Local custodian of PD-OMICS and IRON-DEF (and their datasets). */
  custodian: userKey('alice.white'),
  /** Company personnel only: holds `protected` on nothing. */
  unprotected: userKey('roy.blue'),
  /** Granted one EPIC-DREM dataset and the IRON-DEF project. */
  granted: userKey('victor.viewer'),
  /** Member of the data-steward group. */
  steward: userKey('sara.steward'),
  inactive: userKey('former.staff'),
  catalogEndpoint: endpointKey('ELIXIR Luxembourg Data Catalog'),
  portalEndpoint: endpointKey('Partner Data Portal'),
  unexposedEndpoint: UNEXPOSED_ENDPOINT_KEY,
} as const;

export type KeyName = keyof typeof KEYS;

export interface DemoCatalog extends CatalogTestApp {
  get(path: string, key?: KeyName): request.Test;
  accession(datasetTitle: string): Promise<string>;
  /** How many SQL statements a GET that answers 200 runs. */
  countQueries(path: string, key: KeyName): Promise<number>;
}

/**
 * A catalog app (settings overridden by `env`) on its own database holding the demo catalog plus
 * an unexposed endpoint.
 */
export async function startDemoCatalog(env: Record<string, string> = {}): Promise<DemoCatalog> {
  const t = await startCatalogApp(env);
  await loadDemoData(t.app, DEMO_KEYS);
  await t.dataSource.query(
    `INSERT INTO endpoints (name, url_pattern, api_key_hash) VALUES ('Unused catalog', 'https://x.example/\${entity_id}', $1)`,
    [hashApiKey(UNEXPOSED_ENDPOINT_KEY)],
  );
  await t.versionSettled();
  return {
    ...t,
    get(path: string, key?: KeyName) {
      const req = request(t.server).get(path);
      return key === undefined ? req : req.set('X-API-Key', KEYS[key]);
    },
    async accession(datasetTitle: string) {
      const rows = await t.dataSource.query<{ elu_accession: string }[]>(
        'SELECT elu_accession FROM datasets WHERE title = $1',
        [datasetTitle],
      );
      return rows[0].elu_accession;
    },
    async countQueries(path: string, key: KeyName) {
      // The request's own queries: the background refresh of dataset exports it may start
      // would run beside it, so it is held off while counting.
      const refresher = t.app.get(DatasetExportsRefresher);
      await refresher.settled();
      const held = jest.spyOn(refresher, 'schedule').mockImplementation(() => undefined);
      const spy = jest.spyOn(PostgresQueryRunner.prototype, 'query');
      try {
        await request(t.server).get(path).set('X-API-Key', KEYS[key]).expect(200);
        return spy.mock.calls.length;
      } finally {
        spy.mockRestore();
        held.mockRestore();
      }
    },
  };
}

/**
 * Loads the demo catalog (keys DEMO_KEYS) into the migrated database at `databaseUrl` as
 * `npm run demo-data` does: through the catalog's services, booted without HTTP.
 */
export async function loadDemoCatalog(databaseUrl: string): Promise<void> {
  const settings = loadCatalogSettings({
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_SIZE: '2',
    MIGRATIONS_RUN: 'false',
    LOG_LEVEL: 'silent',
  });
  const app = await NestFactory.createApplicationContext(DemoDataModule.forRoot(settings), {
    logger: false,
  });
  try {
    await loadDemoData(app, DEMO_KEYS);
  } finally {
    await app.close();
  }
}

export function names(items: { name?: unknown }[]): unknown[] {
  return items.map((item) => item.name).sort();
}
