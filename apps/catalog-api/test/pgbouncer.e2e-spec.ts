import { Client } from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { StartRefused } from '@app/platform';
import { withClient } from '../../../scripts/lib/pg-client';
import { startPrivatePgBouncer, PrivatePgBouncer } from '../../../scripts/lib/private-pgbouncer';
import { startAppProcess } from '../../../test/support/app-process';
import {
  CatalogTestApp,
  startCatalogApp,
  TEST_GLOBAL_KEY,
} from '../../../test/support/catalog-app';
import { createCatalogDatabase, createEmptyDatabase } from '../../../test/support/databases';
import { testServices } from '../../../test/support/test-services';
import { PROCESS_START_MS } from '../../../test/support/timeouts';
import { until } from '../../../test/support/wait';
import { runCli } from '../src/cli/run-cli';
import { loadCatalogSettings } from '../src/config/catalog.settings';
import { MIGRATION_LOCK_ID } from '../src/database/migration-runner';
import { createCatalogApp } from '../src/http-app';
import { CatalogVersionTracker } from '../src/catalog-version/catalog-version-tracker';
import { SessionLocksRepository } from '../src/database/session-locks.repository';
import { buildTypeOrmOptions } from '../src/typeorm-options';

/** The pooler's URL of the database at `directUrl`. */
const pooled = (pooler: PrivatePgBouncer, directUrl: string) =>
  `${pooler.serverUrl}${new URL(directUrl).pathname}`;

/** Who holds advisory lock `key` (a one-key lock: classid 0, objid = key), by application. */
async function advisoryHolders(directUrl: string, key: number): Promise<string[]> {
  return withClient(directUrl, async (client) => {
    const { rows } = await client.query<{ application_name: string }>(
      `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.classid = 0 AND l.objid = $1 AND l.granted`,
      [key],
    );
    return rows.map((r) => r.application_name);
  });
}

/** Every advisory lock held in the database at `directUrl`, by whom and on which key. */
async function advisoryLocksIn(directUrl: string): Promise<string[]> {
  return withClient(directUrl, async (client) => {
    const { rows } = await client.query<{ holder: string }>(
      `SELECT a.application_name || ' ' || l.objid AS holder
         FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    return rows.map((r) => r.holder);
  });
}

/** The lines a process wrote, without npm's own warnings. */
const linesOf = (output: string) =>
  output.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('npm warn'));

/**
 * The catalog behind a PgBouncer in transaction mode (Debian's pgbouncer, started here with the
 * configuration docs/operations.md shows): DATABASE_URL names the pooler, DATABASE_DIRECT_URL the
 * database, which only what needs a session uses.
 */
describe('catalog behind PgBouncer in transaction mode', () => {
  let pooler: PrivatePgBouncer;
  const apps: CatalogTestApp[] = [];
  const start = async (directUrl: string, env: Record<string, string> = {}) => {
    const app = await startCatalogApp(
      { DATABASE_URL: pooled(pooler, directUrl), DATABASE_DIRECT_URL: directUrl, ...env },
      directUrl,
    );
    apps.push(app);
    return app;
  };

  beforeAll(async () => {
    pooler = await startPrivatePgBouncer({
      postgresServerUrl: testServices().postgresServerUrl,
    });
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await pooler?.stop();
  });

  it('refuses a client that sends a startup parameter it does not know, as deployed', async () => {
    // What the catalog used to send (pg's statement_timeout option): the pooler is strict.
    const client = new Client({
      connectionString: `${pooler.serverUrl}/postgres`,
      statement_timeout: 1000,
    });
    await expect(client.connect()).rejects.toThrow(/unsupported startup parameter/);
    await client.end().catch(() => undefined);
  });

  it('migrates on the database itself at start, then serves reads and writes through the pooler', async () => {
    const directUrl = await createEmptyDatabase('catalog');
    const c = await start(directUrl, { MIGRATIONS_RUN: 'true' });
    const migrations = await withClient(directUrl, (client) =>
      client.query('SELECT count(*)::int AS n FROM migrations'),
    );
    expect(migrations.rows[0].n).toBeGreaterThan(0);
    await request(c.server)
      .post('/api/admin/users')
      .set('X-API-Key', TEST_GLOBAL_KEY)
      .send({
        username: 'pooled',
        email: 'pooled@example.org',
        first_name: 'Pooled',
        last_name: 'User',
      })
      .expect(201);
    const users = await request(c.server)
      .get('/api/users')
      .set('X-API-Key', TEST_GLOBAL_KEY)
      .expect(200);
    expect(users.body.results.map((u: { text: string }) => u.text)).toContain('Pooled User');
  });

  it('limits statements per transaction (SET LOCAL), leaving the pooled sessions as they were', async () => {
    const c = await start(await createCatalogDatabase(), { DATABASE_STATEMENT_TIMEOUT_MS: '300' });
    const started = Date.now();
    await expect(
      c.dataSource.transaction((manager) => manager.query('SELECT pg_sleep(30)')),
    ).rejects.toMatchObject({ driverError: { code: '57014' } }); // query_canceled
    // Cancelled by the limit, well before the statement's own end (a bound, not a timing).
    expect(Date.now() - started).toBeLessThan(25_000);
    // Outside a transaction a statement gets the pooler's limit (its connect_query), never the
    // 300 ms a transaction set on whichever server connection it had.
    for (let i = 0; i < 5; i++) {
      const [{ statement_timeout }] = await c.dataSource.query('SHOW statement_timeout');
      expect(statement_timeout).toBe('30s');
    }
  });

  it('limits every statement of a connection of its own as a session setting, not a startup parameter', async () => {
    const directUrl = await createCatalogDatabase();
    const direct = new DataSource(
      buildTypeOrmOptions({
        DATABASE_URL: directUrl,
        DATABASE_POOL_SIZE: 1,
        DATABASE_STATEMENT_TIMEOUT_MS: 300,
      }),
    );
    await direct.initialize();
    try {
      await expect(direct.query('SELECT pg_sleep(30)')).rejects.toMatchObject({
        driverError: { code: '57014' },
      });
      const [{ statement_timeout }] = await direct.query('SHOW statement_timeout');
      expect(statement_timeout).toBe('300ms');
    } finally {
      await direct.destroy();
    }
  });

  /** `npm run migrate` with DATABASE_URL on the pooler, as its own process. */
  const migrateThroughPooler = (directUrl: string, env: Record<string, string>) =>
    startAppProcess('catalog-api', 'src/database/migrate', {
      DATABASE_URL: pooled(pooler, directUrl),
      GLOBAL_API_KEY: TEST_GLOBAL_KEY,
      ...env,
    });

  // How it was found: `npm run migrate` through the pooler exited 0 while its advisory lock and
  // unlock ran on different server connections, so the lock stayed held by a pooled one.
  it(
    'npm run migrate through the pooler without DATABASE_DIRECT_URL refuses in one line, holding no lock',
    async () => {
      const directUrl = await createEmptyDatabase('migrate-pooled');
      const migrate = migrateThroughPooler(directUrl, {});
      expect(await migrate.exited).toEqual({ code: 1, signal: null });
      expect(await advisoryLocksIn(directUrl)).toEqual([]);
      expect(linesOf(migrate.output())).toEqual([
        expect.stringMatching(
          /^the catalog needs a session of its own on DATABASE_URL .*pooler in transaction mode.*set DATABASE_DIRECT_URL to the database itself/,
        ),
      ]);
      const applied = await withClient(directUrl, (client) =>
        client.query("SELECT to_regclass('public.migrations') IS NOT NULL AS present"),
      );
      expect(applied.rows[0].present).toBe(false);
    },
    PROCESS_START_MS,
  );

  it(
    'npm run migrate with DATABASE_DIRECT_URL migrates on the database itself and leaves no lock held',
    async () => {
      const directUrl = await createEmptyDatabase('migrate-direct');
      const migrate = migrateThroughPooler(directUrl, { DATABASE_DIRECT_URL: directUrl });
      expect(await migrate.exited).toEqual({ code: 0, signal: null });
      // Asked at once: a lock left on a pooled connection lives until the pooler closes it.
      expect(await advisoryLocksIn(directUrl)).toEqual([]);
      // The next migration takes the lock at once.
      const holder = new Client({ connectionString: directUrl });
      await holder.connect();
      try {
        const { rows } = await holder.query('SELECT pg_try_advisory_lock($1) AS locked', [
          MIGRATION_LOCK_ID,
        ]);
        expect(rows[0].locked).toBe(true);
      } finally {
        await holder.end();
      }
    },
    PROCESS_START_MS,
  );

  it('the app and the catalog tool refuse a session URL that reaches the pooler, naming what to set', async () => {
    const directUrl = await createCatalogDatabase();
    const env = { GLOBAL_API_KEY: TEST_GLOBAL_KEY, MIGRATIONS_RUN: 'false', LOG_LEVEL: 'silent' };
    const app = await createCatalogApp(
      loadCatalogSettings({ ...env, DATABASE_URL: pooled(pooler, directUrl) }),
    );
    await expect(app.init()).rejects.toThrow(StartRefused);
    await app.close().catch(() => undefined);
    // A direct URL that names the pooler as well is no better.
    const both = await createCatalogApp(
      loadCatalogSettings({
        ...env,
        DATABASE_URL: pooled(pooler, directUrl),
        DATABASE_DIRECT_URL: pooled(pooler, directUrl),
      }),
    );
    await expect(both.init()).rejects.toThrow(
      /on DATABASE_DIRECT_URL .*set DATABASE_DIRECT_URL to the database itself, not to the pooler/,
    );
    await both.close().catch(() => undefined);
    // The tool's identity-provider sync holds a session lock: refused before it runs.
    let err = '';
    const code = await runCli(
      ['idp-sync'],
      { DATABASE_URL: pooled(pooler, directUrl), GLOBAL_API_KEY: TEST_GLOBAL_KEY },
      { out: () => undefined, err: (text) => (err += text), cwd: process.cwd() },
    );
    expect(code).toBe(1);
    expect(err).toMatch(/^the catalog needs a session of its own on DATABASE_URL /);
    expect(await advisoryLocksIn(directUrl)).toEqual([]);
  });

  it("keeps a project's Principal_Investigator who is a user as its contact, read by the writer and another replica", async () => {
    // Issue 55, item 9 (a red team's catalog checks): the PI read back as `contacts: []` behind
    // PgBouncer. Written and read through the pooler by two replicas of one database. The cause
    // was not the pooler: the user had no affiliation (as the IdP sync makes them), the PI's
    // stated one was dropped, and the export leaves out a person without one.
    const directUrl = await createCatalogDatabase();
    const [writer, reader] = [await start(directUrl), await start(directUrl)];
    const post = (path: string, body: object) =>
      request(writer.server).post(path).set('X-API-Key', TEST_GLOBAL_KEY).send(body);
    await post('/api/partners', { items: [{ name: 'Pooled Institute', acronym: 'PIN' }] }).expect(
      200,
    );
    await post('/api/projects', { items: [{ name: 'Pooled project', acronym: 'POOL' }] }).expect(
      200,
    );
    const contactsOf = async (app: CatalogTestApp) => {
      const res = await request(app.server)
        .get('/api/projects')
        .set('X-API-Key', TEST_GLOBAL_KEY)
        .expect(200);
      return (res.body.items as { acronym: string; contacts: unknown[] }[]).find(
        (p) => p.acronym === 'POOL',
      )?.contacts;
    };
    // Both replicas have read (and cached) the project without contacts.
    expect(await contactsOf(writer)).toEqual([]);
    expect(await contactsOf(reader)).toEqual([]);
    await post('/api/admin/users', {
      username: 'pia',
      email: 'Pia.Invest@example.org',
      first_name: 'Pia',
      last_name: 'Invest',
    }).expect(201);
    const pi = {
      first_name: 'Pia',
      last_name: 'Invest',
      email: 'pia.invest@example.org',
      role: 'Principal_Investigator',
      affiliations: ['Pooled Institute'],
    };
    await post('/api/projects', {
      items: [{ name: 'Pooled project', acronym: 'POOL', contacts: [pi] }],
    }).expect(200);
    const expected = [
      {
        first_name: 'Pia',
        last_name: 'Invest',
        email: 'Pia.Invest@example.org',
        role: 'Principal_Investigator',
        affiliations: ['Pooled Institute'],
      },
    ];
    expect(await contactsOf(writer)).toEqual(expected);
    // The other replica learns of the write by notification, a few milliseconds after commit.
    await reader.versionSettled();
    expect(await contactsOf(reader)).toEqual(expected);
  });

  it('LISTENs for the data version on the database itself', async () => {
    const c = await start(await createCatalogDatabase());
    await c.versionSettled();
    // A version only a notification can bring (the table never holds it, so no read can).
    await withClient(c.databaseUrl, (client) =>
      client.query(`NOTIFY catalog_version, '987654321'`),
    );
    const tracker = c.app.get(CatalogVersionTracker);
    await until(() => tracker.known() === '987654321', 'the notified version to arrive');
  });

  it('holds session advisory locks on a connection of their own to the database itself', async () => {
    const c = await start(await createCatalogDatabase());
    const locks = c.app.get(SessionLocksRepository);
    const key = 731_104_990;
    const held = await locks.tryLock(key);
    expect(held).not.toBeNull();
    expect(await advisoryHolders(c.databaseUrl, key)).toEqual(['catalog-api session lock']);
    expect(await locks.tryLock(key)).toBeNull();
    await held!.release();
    expect(await advisoryHolders(c.databaseUrl, key)).toEqual([]);
    const again = await locks.tryLock(key);
    expect(again).not.toBeNull();
    await again!.release();
  });
});
