import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hashApiKey } from '@app/auth';
import { loadDemoData } from '../../apps/catalog-api/src/demo/demo-data-loader';
import {
  DEMO_KEYS,
  KEYS,
  UNEXPOSED_ENDPOINT_KEY,
} from '../../apps/catalog-api/test/demo-catalog.fixture';
import { CatalogTestApp, startCatalogApp } from '../support/catalog-app';
import { generateAttacks } from './support/attacks';
import { catalogFingerprint } from './support/catalog-snapshot';
import { runAttacks } from './support/hostile-client';
import { listRoutes } from './support/routes';

const MAX_BODY_BYTES = 64 * 1024;
const ATTACKS = 4000;

describe('catalog-api under hostile input', () => {
  let t: CatalogTestApp;
  let port: number;

  beforeAll(async () => {
    // Every attack comes from one address: the failure limit is set out of its reach so that
    // attacks keep reaching the handlers (auth-guessing.robust-spec.ts attacks the limit).
    t = await startCatalogApp({
      MAX_BODY_BYTES: String(MAX_BODY_BYTES),
      AUTH_FAILURE_LIMIT: '1000000',
    });
    await loadDemoData(t.app, DEMO_KEYS);
    await t.dataSource.query(
      `INSERT INTO endpoints (name, url_pattern, api_key_hash) VALUES ('Unused catalog', 'https://x.example/\${entity_id}', $1)`,
      [hashApiKey(UNEXPOSED_ENDPOINT_KEY)],
    );
    const server = t.app.getHttpServer() as Server;
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => t.close());

  it('answers every generated request on every route without a 500, errors in the envelope, nothing written', async () => {
    const routes = listRoutes(t.app);
    expect(routes.length).toBeGreaterThanOrEqual(8);
    const keys = {
      ...KEYS,
      empty: '',
      random64: 'r'.repeat(64),
      long: 'k'.repeat(8192),
      sql: "' OR '1'='1",
      latin1: 'clé-é',
    };
    const attacks = generateAttacks(routes, {
      seed: Number(process.env.ROBUSTNESS_SEED ?? 20261122),
      count: ATTACKS,
      keys,
      knownParams: ['page', 'search', 'project_id', 'project_title', 'fields', 'published', 'API_KEY'],
      maxBodyBytes: MAX_BODY_BYTES,
      validSegments: { category: ['disease', 'phenotype', 'study', 'gene'] },
    });
    const before = await catalogFingerprint(t.dataSource);

    const run = await runAttacks(port, attacks);

    process.stdout.write(
      `catalog-api: ${run.tried} hostile requests over ${routes.length} routes ` +
        `(${routes.map((r) => `${r.method} ${r.path}`).join(', ')}); statuses ${JSON.stringify(run.byStatus)}\n`,
    );
    expect(run.problems.slice(0, 30)).toEqual([]);
    expect(run.tried).toBe(ATTACKS);
    expect(await catalogFingerprint(t.dataSource)).toEqual(before);
  });
});
