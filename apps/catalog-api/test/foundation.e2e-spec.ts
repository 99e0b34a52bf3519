import type { NestExpressApplication } from '@nestjs/platform-express';
import { Client } from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { loadCatalogSettings } from '../src/config/catalog.settings';
import { catalogMigrations } from '../src/database/migrations';
import { MIGRATION_LOCK_ID } from '../src/database/migration-runner';
import { createCatalogApp } from '../src/http-app';
import { AppProcess, freePort, startAppProcess } from '../../../test/support/app-process';
import { startCatalogApp, CatalogTestApp } from '../../../test/support/catalog-app';
import { createCatalogDatabase, createEmptyDatabase } from '../../../test/support/databases';
import { testServices, withAdminClient } from '../../../test/support/test-services';
import { PROCESS_START_MS } from '../../../test/support/timeouts';
import { until } from '../../../test/support/wait';

// Booting processes without a build (ts-node) and dropping databases is slow on a loaded 2-core
// machine; nothing here is timed, the limit only turns a hang into a failure.
jest.setTimeout(PROCESS_START_MS);

const GOOD_KEY = 'e2e-global-key-0123456789abcdef0123456789';

function expectEnvelope(res: request.Response, status: number, description: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(res.headers['x-request-id']).toBeDefined();
  expect(res.body).toEqual({ status: 'Error', description, more: expect.any(Object) });
}

async function appOn(databaseUrl: string, migrationsRun: boolean): Promise<NestExpressApplication> {
  const app = await createCatalogApp(
    loadCatalogSettings({
      DATABASE_URL: databaseUrl,
      MIGRATIONS_RUN: String(migrationsRun),
      DATABASE_POOL_SIZE: '2',
      LOG_LEVEL: 'silent',
    }),
  );
  await app.init();
  return app;
}

describe('catalog-api foundation', () => {
  // The two process tests are slow to boot without a build (ts-node): start them together.
  let badSettings: AppProcess;
  let running: AppProcess;
  let runningPort: number;
  let t: CatalogTestApp;

  beforeAll(async () => {
    badSettings = startAppProcess('catalog-api', 'src/main', {
      GLOBAL_API_KEY: 'too-short',
      PORT: 'eighty',
    });
    runningPort = await freePort();
    running = startAppProcess('catalog-api', 'src/main', {
      DATABASE_URL: await createCatalogDatabase(),
      PORT: String(runningPort),
      HOST: '127.0.0.1',
      MIGRATIONS_RUN: 'false',
      GLOBAL_API_KEY: GOOD_KEY,
      LOG_LEVEL: 'info',
    });
    t = await startCatalogApp();
  });

  afterAll(async () => {
    await t.close();
    for (const proc of [badSettings, running])
      if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
  });

  describe('health', () => {
    it('live and ready answer 200 without a key; ready names the database and schema checks', async () => {
      await request(t.server).get('/health/live').expect(200, { status: 'ok' });
      const ready = await request(t.server).get('/health/ready').expect(200);
      expect(ready.body).toEqual({ status: 'ok', checks: { database: 'up', schema: 'up' } });
    });

    it('is not ready on a schema older than the release, saying why; a newer one serves', async () => {
      const last = catalogMigrations.map((migration) => new migration().name).at(-1)!;
      const older = await startCatalogApp();
      try {
        await older.dataSource.query('DELETE FROM migrations WHERE name = $1', [last]);
        const res = await request(older.server).get('/health/ready');
        expectEnvelope(res, 503, 'Not ready');
        expect(res.body.more.checks).toEqual({
          database: 'up',
          schema: `down: schema too old: 1 of this release's ${catalogMigrations.length} migrations not applied (${last}); the release's migration Job applies them`,
        });
        // Back, and one more that only a newer release knows.
        await older.dataSource.query(
          'INSERT INTO migrations (timestamp, name) VALUES ($1, $2), ($3, $4)',
          [Number(last.slice(-13)), last, 9999999999999, 'NextRelease9999999999999'],
        );
        await request(older.server).get('/health/ready').expect(200);
      } finally {
        await older.close();
      }
    });

    it('ready is 503 in the envelope once the database is gone, while live stays 200', async () => {
      const doomed = await startCatalogApp();
      const name = new URL(doomed.databaseUrl).pathname.slice(1);
      const admin = (sql: string) =>
        withAdminClient(testServices().postgresServerUrl, (client) => client.query(sql));
      try {
        // Gone for the app: no new connection admitted, every open one ended. A DROP here would
        // race the pool's reconnections (through PgBouncer each one blocks on the drop's lock,
        // which waits for it), so the database itself is dropped after the app is closed.
        await admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
        await admin(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`,
        );
        const res = await request(doomed.server).get('/health/ready');
        expectEnvelope(res, 503, 'Not ready');
        expect(res.body.more.checks.database).toMatch(/^down: /);
        await request(doomed.server).get('/health/live').expect(200);
      } finally {
        await doomed.close().catch(() => undefined);
        await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      }
    });
  });

  describe('migrations at start', () => {
    async function appliedMigrations(url: string): Promise<string[] | null> {
      const dataSource = new DataSource({ type: 'postgres', url });
      await dataSource.initialize();
      try {
        const [{ exists }] = await dataSource.query<{ exists: boolean }[]>(
          `SELECT to_regclass('public.migrations') IS NOT NULL AS exists`,
        );
        if (!exists) return null;
        const rows = await dataSource.query<{ name: string }[]>(
          'SELECT name FROM migrations ORDER BY id',
        );
        return rows.map((row) => row.name);
      } finally {
        await dataSource.destroy();
      }
    }

    it('two apps starting at once on one empty database both succeed, each migration applied once', async () => {
      const url = await createEmptyDatabase('migrate');
      const apps = await Promise.all([appOn(url, true), appOn(url, true)]);
      try {
        for (const app of apps) await request(app.getHttpServer()).get('/health/ready').expect(200);
        expect(await appliedMigrations(url)).toEqual(
          catalogMigrations.map((migration) => migration.name),
        );
      } finally {
        await Promise.all(apps.map((app) => app.close()));
      }
    });

    it('with MIGRATIONS_RUN=false nothing is migrated', async () => {
      const url = await createEmptyDatabase('nomigrate');
      const app = await appOn(url, false);
      try {
        expect(await appliedMigrations(url)).toBeNull();
      } finally {
        await app.close();
      }
    });
  });

  describe('the process', () => {
    it('exits 1 listing every bad setting when settings are wrong', async () => {
      const { code } = await badSettings.exited;
      expect(code).toBe(1);
      const output = badSettings.output();
      expect(output).toContain('Invalid settings:');
      expect(output).toMatch(/- DATABASE_URL /);
      expect(output).toContain('- GLOBAL_API_KEY must be at least 32 characters long');
      expect(output).toMatch(/- PORT /);
    });

    it('serves, then shuts down cleanly with exit code 0 on SIGTERM', async () => {
      await running.waitFor(/Nest application successfully started/);
      const ready = await fetch(`http://127.0.0.1:${runningPort}/health/ready`);
      expect(ready.status).toBe(200);
      running.child.kill('SIGTERM');
      expect(await running.exited).toEqual({ code: 0, signal: null });
    });

    // As PID 1 of a container a signal without a handler is dropped; this process exits on its
    // own handler (test/deploy/deploy.mjs runs it as PID 1).
    it('stops a migration waiting for the migration lock at once on SIGTERM, exit 143, nothing applied', async () => {
      const url = await createEmptyDatabase('migrate-sigterm');
      const holder = new Client({ connectionString: url });
      await holder.connect();
      try {
        await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
        const migrate = startAppProcess('catalog-api', 'src/database/migrate', {
          DATABASE_URL: url,
          GLOBAL_API_KEY: GOOD_KEY,
        });
        // The runner asks for the lock again and again (migration-runner.ts): it waits once it
        // has asked.
        const waiting = async () =>
          (
            await holder.query<{ n: string }>(
              `SELECT count(*) AS n FROM pg_stat_activity
                WHERE query LIKE '%pg_try_advisory_lock%' AND pid <> pg_backend_pid()`,
            )
          ).rows[0].n !== '0';
        await until(waiting, 'the migration to wait for the lock', PROCESS_START_MS, 100);
        migrate.child.kill('SIGTERM');
        expect(await migrate.exited).toEqual({ code: 143, signal: null });
        expect(migrate.output()).toContain('migration stopped by SIGTERM');
        const { rows } = await holder.query<{ exists: boolean }>(
          "SELECT to_regclass('public.migrations') IS NOT NULL AS exists",
        );
        expect(rows[0].exists).toBe(false);
      } finally {
        await holder.end();
      }
    });
  });
});
