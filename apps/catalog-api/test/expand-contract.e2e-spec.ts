import { DataSource, MigrationExecutor, type MigrationInterface, type QueryRunner } from 'typeorm';
import { createEmptyDatabase } from '../../../test/support/databases';
import { APP_START_MS } from '../../../test/support/timeouts';
import { REQUIRED_MIGRATIONS } from '../src/database/schema-version';
import { catalogMigrations } from '../src/database/migrations';
import { buildTypeOrmOptions } from '../src/typeorm-options';
import {
  type Column,
  contractedSchema,
  lockingStatements,
  migrationsOf,
  previousRelease,
  previousReleaseReads,
  SCHEMA_QUERY,
  schemaOf,
  type Schema,
} from './support/expand-contract';

// Release N-1 keeps serving while N migrates and rolls out, so the migrations N adds may only
// expand the schema, without long locks (docs/operations.md, "Schema changes"). Checked on
// PostgreSQL: the previous release's migrations, then the new ones with every statement they
// send recorded. `npm run test:deploy` runs the previous release's image on the new schema.
jest.setTimeout(APP_START_MS);

const ref = previousRelease();

type MigrationClass = new () => MigrationInterface;

interface Upgrade {
  before: Schema;
  after: Schema;
  statements: string[];
  added: string[];
}

/** Migrates an empty database to the previous release, then runs `added` on it, recording. */
async function upgrade(previous: MigrationClass[], added: MigrationClass[]): Promise<Upgrade> {
  const options = buildTypeOrmOptions({
    DATABASE_URL: await createEmptyDatabase('expand'),
    DATABASE_POOL_SIZE: 1,
  });
  const migrate = async <T>(
    migrations: MigrationClass[],
    around: (runner: QueryRunner, run: () => Promise<string[]>) => Promise<T>,
  ): Promise<T> => {
    const dataSource = await new DataSource({ ...options, migrations }).initialize();
    const runner = dataSource.createQueryRunner();
    try {
      const executor = new MigrationExecutor(dataSource, runner);
      executor.transaction = 'each';
      return await around(runner, async () =>
        (await executor.executePendingMigrations()).map((m) => m.name),
      );
    } finally {
      await runner.release();
      await dataSource.destroy();
    }
  };
  const schema = async (runner: QueryRunner) =>
    schemaOf((await runner.query(SCHEMA_QUERY)) as Column[]);
  await migrate(previous, (_runner, run) => run());
  return migrate([...previous, ...added], async (runner, run) => {
    const before = await schema(runner);
    const statements: string[] = [];
    const query = runner.query.bind(runner) as (...args: unknown[]) => Promise<unknown>;
    runner.query = ((sql: string, ...rest: unknown[]) => {
      statements.push(sql);
      return query(sql, ...rest);
    }) as QueryRunner['query'];
    const applied = await run();
    return { before, after: await schema(runner), statements, added: applied };
  });
}

const previousNames = migrationsOf(ref);

it(`keeps the migrations of ${ref} first, in their order`, () => {
  expect(previousNames.length).toBeGreaterThan(0);
  expect(REQUIRED_MIGRATIONS.slice(0, previousNames.length)).toEqual(previousNames);
});

describe(`the migrations added since ${ref}`, () => {
  let result: Upgrade;

  beforeAll(async () => {
    const count = previousNames.length;
    result = await upgrade(catalogMigrations.slice(0, count), catalogMigrations.slice(count));
  });

  it('run on the previous schema', () => {
    expect(result.added).toEqual(REQUIRED_MIGRATIONS.slice(previousNames.length));
    expect(result.statements.length).toBeGreaterThan(0);
  });

  it('take nothing away that the previous release reads', () => {
    expect(
      contractedSchema(result.before, result.after, (name) => previousReleaseReads(ref, name)),
    ).toEqual([]);
  });

  it('hold no long lock on a table the previous release uses', () => {
    expect(lockingStatements(result.statements, result.before.tables)).toEqual([]);
  });
});

describe('the check itself', () => {
  class RenamesAcronym9000000000002 implements MigrationInterface {
    name = 'RenamesAcronym9000000000002';
    async up(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query('ALTER TABLE "partners" RENAME COLUMN "acronym" TO "short_name"');
      await queryRunner.query('CREATE INDEX "IDX_partners_short" ON "partners" ("short_name")');
      await queryRunner.query(
        'ALTER TABLE "partners" ADD "rank" integer NOT NULL, ADD CONSTRAINT "CHK_rank" CHECK ("rank" > 0)',
      );
    }
    async down(): Promise<void> {}
  }

  it('fails a migration that renames a column the previous release reads, with long locks', async () => {
    const count = previousNames.length;
    const bad = await upgrade(catalogMigrations.slice(0, count), [RenamesAcronym9000000000002]);
    expect(
      contractedSchema(bad.before, bad.after, (name) => previousReleaseReads(ref, name)),
    ).toEqual([
      'drops or renames column partners.acronym, which the previous release reads',
      "adds partners.rank as required without a default: the previous release's inserts leave it out",
    ]);
    expect(lockingStatements(bad.statements, bad.before.tables)).toEqual([
      'builds an index on partners without CONCURRENTLY: CREATE INDEX IDX_partners_short ON partners (short_name)',
      'adds a constraint without NOT VALID (validate it in a statement of its own) on partners: ADD CONSTRAINT CHK_rank CHECK (rank > 0)',
    ]);
  });

  it('accepts the online forms, and anything on a new table', () => {
    const existing = new Set(['partners']);
    expect(
      lockingStatements(
        [
          'CREATE INDEX CONCURRENTLY IF NOT EXISTS "IDX_a" ON "partners" ("name")',
          'ALTER TABLE "partners" ADD CONSTRAINT "CHK_a" CHECK ("x" > 0) NOT VALID',
          'ALTER TABLE "partners" VALIDATE CONSTRAINT "CHK_a"',
          'ALTER TABLE "partners" ADD CONSTRAINT "UQ_a" UNIQUE USING INDEX "IDX_a"',
          'CREATE TABLE "fresh" ("id" int REFERENCES "partners" ("id"))',
          'CREATE INDEX "IDX_fresh" ON "fresh" ("id")',
          'ALTER TABLE "fresh" ADD CONSTRAINT "FK_b" FOREIGN KEY ("id") REFERENCES "partners" ("id")',
        ],
        existing,
      ),
    ).toEqual([]);
    expect(
      lockingStatements(
        [
          'ALTER TABLE "partners" ADD CONSTRAINT "UQ_b" UNIQUE ("name"), ADD "p" int REFERENCES "people" ("id")',
          'ALTER TABLE ONLY public."partners" ALTER COLUMN "name" TYPE text',
        ],
        existing,
      ),
    ).toHaveLength(3);
  });

  it('lets a migration drop what the previous release no longer reads', () => {
    const column = (table: string, name: string): Column => ({
      table,
      column: name,
      type: 'integer',
      nullable: true,
      hasDefault: false,
    });
    const before = schemaOf([column('partners', 'name'), column('partners', 'legacy_rank')]);
    const after = schemaOf([column('partners', 'name')]);
    expect(contractedSchema(before, after, (name) => name !== 'legacy_rank')).toEqual([]);
    expect(contractedSchema(before, after, () => true)).toEqual([
      'drops or renames column partners.legacy_rank, which the previous release reads',
    ]);
  });
});
