import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { runMigrationsWithLock } from '../../apps/catalog-api/src/database/migration-runner';
import { buildTypeOrmOptions } from '../../apps/catalog-api/src/typeorm-options';
import { KEYS, loadDemoCatalog } from '../../apps/catalog-api/test/demo-catalog.fixture';
import { startCatalogApp } from '../support/catalog-app';
import { eventually, Sample, sleep, startReaders } from './support/load-loop';
import { PostgresProcess, startPostgresProcess } from './support/postgres-process';


const PATHS = ['/api/datasets', '/api/projects', '/api/contracts', '/api/partners', '/api/cohorts'];

function isEnvelope(sample: Sample): boolean {
  try {
    const body = JSON.parse(sample.body) as Record<string, unknown>;
    return sample.contentType === 'application/json; charset=utf-8' && body.status === 'Error' && typeof body.description === 'string' && typeof body.more === 'object';
  } catch {
    return false;
  }
}

/**
 * The catalog on a Postgres of its own (embedded, never the shared server), which the test stops
 * and starts again while readers keep asking: 503 while it is down, then full recovery, and no
 * answer that differs from what the catalog held.
 */
describe('catalog-api while its Postgres is stopped and restarted under load', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'robust-pg-'));
  let postgres: PostgresProcess;
  let app: NestExpressApplication;
  let baseUrl: string;
  const expected = new Map<string, string>();

  const startPostgres = (port?: number) => startPostgresProcess(dataDir, port);

  beforeAll(async () => {
    postgres = await startPostgres();
    const admin = new Client({ connectionString: `${postgres.url}/postgres` });
    await admin.connect();
    await admin.query('CREATE DATABASE catalog');
    await admin.end();
    const url = `${postgres.url}/catalog`;
    const setup = new DataSource(buildTypeOrmOptions({ DATABASE_URL: url, DATABASE_POOL_SIZE: 2 }));
    await setup.initialize();
    await runMigrationsWithLock(setup);
    await loadDemoCatalog(url);
    await setup.destroy();
    app = (await startCatalogApp({}, url)).app;
    const server = app.getHttpServer() as Server;
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    for (const path of PATHS) {
      const res = await fetch(baseUrl + path, { headers: { 'X-API-Key': KEYS.global } });
      expect(res.status).toBe(200);
      expected.set(path, await res.text());
    }
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await postgres?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 503 while Postgres is down, recovers fully, and never gives a wrong answer', async () => {
    const readers = startReaders(baseUrl, PATHS, { 'X-API-Key': KEYS.global }, 4, 90_000);
    await sleep(2000);
    const stoppedAt = Date.now();
    await postgres.stop();
    const downFrom = Date.now();
    await sleep(5000);
    const downUntil = Date.now();
    postgres = await startPostgres(postgres.port);
    const restartedAt = Date.now();
    const recovered = await eventually(
      () => readers.samples.slice(-8).length === 8 && readers.samples.slice(-8).every((s) => s.status === 200),
      30_000,
    );
    const recoveredAt = Date.now();
    await sleep(2000);
    await readers.stop();
    const { samples } = readers;

    process.stdout.write(
      `postgres restart: ${samples.length} requests; down ${Math.round((downUntil - stoppedAt) / 1000)} s; ` +
        `recovered ${recoveredAt - restartedAt} ms after the restart; statuses ${JSON.stringify(
          samples.reduce<Record<number, number>>((acc, s) => ({ ...acc, [s.status]: (acc[s.status] ?? 0) + 1 }), {}),
        )}\n`,
    );
    expect(recovered).toBe(true);
    // Only two answers exist: the right data, or 503 in the envelope.
    const wrong = samples.filter(
      (s) => !(s.status === 200 && s.body === expected.get(s.path)) && !(s.status === 503 && isEnvelope(s)),
    );
    expect(wrong.map((s) => `${s.path} ${s.status} ${s.body.slice(0, 200)}`)).toEqual([]);
    // While it was down (after in-flight requests settled), nothing was served from the database.
    const whileDown = samples.filter((s) => s.at > downFrom + 500 && s.at < downUntil);
    expect(whileDown.length).toBeGreaterThan(0);
    expect(whileDown.filter((s) => s.status !== 503)).toEqual([]);
    // Full recovery: everything after recovery is right.
    expect(samples.filter((s) => s.at > recoveredAt && s.status !== 200)).toEqual([]);
  });
});
