import { Client } from 'pg';
import { DataSource, type MigrationInterface, type QueryRunner } from 'typeorm';
import { createCatalogDatabase, createEmptyDatabase } from '../../../test/support/databases';
import { APP_START_MS } from '../../../test/support/timeouts';
import { until } from '../../../test/support/wait';
import { migrateCatalog } from '../src/catalog-migration';
import { MIGRATION_LOCK_ID, runMigrationsWithLock } from '../src/database/migration-runner';
import { catalogMigrations } from '../src/database/migrations';
import { addCheckConstraint, createIndexConcurrently } from '../src/database/migrations/online-ddl';
import { buildTypeOrmOptions } from '../src/typeorm-options';

// The migration step on real PostgreSQL: its own time-outs, giving way to locks, the online
// schema-change helpers, and the shipped vocabularies.
jest.setTimeout(APP_START_MS);

async function dataSourceOn(
  url: string,
  extra: (new () => MigrationInterface)[] = [],
): Promise<DataSource> {
  const options = buildTypeOrmOptions({ DATABASE_URL: url, DATABASE_POOL_SIZE: 2 });
  const dataSource = new DataSource({ ...options, migrations: [...catalogMigrations, ...extra] });
  return dataSource.initialize();
}

async function session(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  await client.connect();
  return client;
}

/** What a test migration saw of its session. */
const seen: Record<string, string> = {};

class AddColumnToPartners9000000000001 implements MigrationInterface {
  name = 'AddColumnToPartners9000000000001';
  async up(queryRunner: QueryRunner): Promise<void> {
    const [{ statement_timeout }] = (await queryRunner.query('SHOW statement_timeout')) as {
      statement_timeout: string;
    }[];
    const [{ lock_timeout }] = (await queryRunner.query('SHOW lock_timeout')) as {
      lock_timeout: string;
    }[];
    Object.assign(seen, { statement_timeout, lock_timeout });
    await queryRunner.query('ALTER TABLE "partners" ADD COLUMN "test_note" text');
  }
  async down(): Promise<void> {}
}

describe('the migration runner', () => {
  let url: string;
  let dataSource: DataSource;
  let other: Client;

  beforeEach(async () => {
    url = await createCatalogDatabase();
    dataSource = await dataSourceOn(url, [AddColumnToPartners9000000000001]);
    other = await session(url);
  });

  afterEach(async () => {
    await other.end().catch(() => undefined);
    await dataSource.destroy();
  });

  it("runs with no statement time-out and a short lock time-out, then gives the connection back with the pool's", async () => {
    const timeoutsOf = async (runner: QueryRunner) => ({
      ...((await runner.query('SHOW statement_timeout')) as object[])[0],
      ...((await runner.query('SHOW lock_timeout')) as object[])[0],
    });
    const probe = dataSource.createQueryRunner();
    const pools = await timeoutsOf(probe).finally(() => probe.release());
    expect(pools).not.toEqual({ statement_timeout: '0', lock_timeout: '1500ms' });
    const applied = await runMigrationsWithLock(dataSource, { lockTimeoutMs: 1_500 });
    expect(applied).toEqual(['AddColumnToPartners9000000000001']);
    expect(seen).toEqual({ statement_timeout: '0', lock_timeout: '1500ms' });
    // The pool has two connections: both carry the pool's time-outs again.
    const runners = [dataSource.createQueryRunner(), dataSource.createQueryRunner()];
    try {
      for (const runner of runners) {
        await runner.connect();
        expect(await timeoutsOf(runner)).toEqual(pools);
      }
    } finally {
      for (const runner of runners) await runner.release();
    }
  });

  it('gives way to a lock held by the running release, then applies the migration once it is free', async () => {
    // A long transaction of the running release reads the table the migration alters.
    await other.query('BEGIN');
    await other.query('SELECT count(*) FROM partners');
    const timeouts: number[] = [];
    const applied = await runMigrationsWithLock(dataSource, {
      lockTimeoutMs: 100,
      onLockTimeout: (attempt, error) => {
        expect(error.message).toMatch(/lock timeout/);
        timeouts.push(attempt);
        // The release's transaction ends while the migration pauses.
        if (attempt === 2) void other.query('COMMIT');
      },
    });
    expect(timeouts).toEqual([1, 2]);
    expect(applied).toEqual(['AddColumnToPartners9000000000001']);
  });

  it('fails with the lock error after its attempts, the migration not applied', async () => {
    await other.query('BEGIN');
    await other.query('SELECT count(*) FROM partners');
    await expect(
      runMigrationsWithLock(dataSource, { lockTimeoutMs: 50, attempts: 2 }),
    ).rejects.toMatchObject({ code: '55P03' });
    await other.query('ROLLBACK');
    const names = await other.query<{ name: string }>('SELECT name FROM migrations');
    expect(names.rows.map((row) => row.name)).not.toContain('AddColumnToPartners9000000000001');
  });

  it('waits for another migration run however long it takes (the lock time-out is not for that wait), holding no snapshot that a concurrent index build would wait for', async () => {
    await other.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    let settled = false;
    const running = runMigrationsWithLock(dataSource, { lockTimeoutMs: 50 }).finally(() => {
      settled = true;
    });
    await until(async () => {
      const { rows } = await other.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE query LIKE '%pg_try_advisory_lock%' AND pid <> pg_backend_pid()`,
      );
      return rows[0].n > 0;
    }, 'the run to ask for the advisory lock');
    // The holder builds an index CONCURRENTLY, which waits for every older snapshot: a run
    // waiting for the lock inside one statement would hold one, and the two would deadlock.
    await other.query('CREATE TABLE "lock_wait_probe" ("id" int)');
    await other.query('CREATE INDEX CONCURRENTLY "lock_wait_probe_id" ON "lock_wait_probe" ("id")');
    // Far past the lock time-out, which would have ended a capped wait: still waiting.
    const since = Date.now();
    await until(async () => settled || Date.now() - since > 500, 'half a second of waiting');
    expect(settled).toBe(false);
    await other.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
    expect(await running).toEqual(['AddColumnToPartners9000000000001']);
  });
});

describe('online schema changes', () => {
  let dataSource: DataSource;
  let runner: QueryRunner;

  beforeAll(async () => {
    dataSource = await dataSourceOn(await createCatalogDatabase());
    runner = dataSource.createQueryRunner();
    await runner.connect();
    await runner.query('CREATE TABLE "online_ddl_test" ("id" int, "n" int)');
    await runner.query('INSERT INTO "online_ddl_test" VALUES (1, 1), (2, 1)');
  });

  afterAll(async () => {
    await runner.release();
    await dataSource.destroy();
  });

  it('builds an index concurrently, replacing the INVALID one an interrupted build left', async () => {
    // A unique build over duplicates fails half-way, as an interrupted build does.
    await expect(
      createIndexConcurrently(runner, 'IDX_online_n', 'ON "online_ddl_test" ("n")', {
        unique: true,
      }),
    ).rejects.toThrow(/could not create unique index/);
    const state = () =>
      runner.query(
        `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
          WHERE c.relname = 'IDX_online_n'`,
      );
    expect(await state()).toEqual([{ valid: false }]);
    await runner.query('UPDATE "online_ddl_test" SET "n" = "id"');
    await createIndexConcurrently(runner, 'IDX_online_n', 'ON "online_ddl_test" ("n")', {
      unique: true,
    });
    expect(await state()).toEqual([{ valid: true }]);
    // Again: nothing to do.
    await createIndexConcurrently(runner, 'IDX_online_n', 'ON "online_ddl_test" ("n")', {
      unique: true,
    });
    expect(await state()).toEqual([{ valid: true }]);
  });

  it('adds a CHECK NOT VALID, validates it apart, and can run again', async () => {
    await addCheckConstraint(runner, 'online_ddl_test', 'CHK_online_n', '"n" > 0');
    await addCheckConstraint(runner, 'online_ddl_test', 'CHK_online_n', '"n" > 0');
    expect(
      await runner.query(`SELECT convalidated FROM pg_constraint WHERE conname = 'CHK_online_n'`),
    ).toEqual([{ convalidated: true }]);
    await expect(runner.query('INSERT INTO "online_ddl_test" VALUES (3, 0)')).rejects.toThrow(
      /CHK_online_n/,
    );
  });

  it("leaves the release's CHECK constraints validated", async () => {
    const rows = (await runner.query(
      `SELECT conname, convalidated FROM pg_constraint
        WHERE conrelid = 'storage_locations'::regclass AND contype = 'c' ORDER BY conname`,
    )) as { conname: string; convalidated: boolean }[];
    expect(rows).toEqual(
      expect.arrayContaining([
        { conname: 'CHK_storage_locations_byte_size', convalidated: true },
        { conname: 'CHK_storage_locations_manifest_sha256', convalidated: true },
      ]),
    );
  });
});

describe('the migration step of a release', () => {
  it('migrates an empty database and loads the shipped vocabularies; run again, it changes nothing', async () => {
    const dataSource = await dataSourceOn(await createEmptyDatabase('fresh'));
    try {
      const first = await migrateCatalog(dataSource);
      expect(first.migrations).toEqual(catalogMigrations.map((m) => new m().name));
      const loaded = Object.values(first.vocabularies);
      expect(loaded.every((counts) => counts.inserted === counts.total && counts.total > 0)).toBe(
        true,
      );
      const [{ found }] = (await dataSource.query(
        `SELECT count(*)::int AS found FROM terms WHERE category = 'disease' AND label ILIKE '%diabetes%'`,
      )) as { found: number }[];
      expect(found).toBeGreaterThan(0);

      const second = await migrateCatalog(dataSource);
      expect(second.migrations).toEqual([]);
      for (const counts of Object.values(second.vocabularies))
        expect(counts).toEqual({ ...counts, inserted: 0, updated: 0, unchanged: counts.total });
    } finally {
      await dataSource.destroy();
    }
  });
});
