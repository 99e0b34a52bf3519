import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each dataset's export (the JSON of `GET /api/datasets`) is kept rendered in `dataset_exports`,
 * so a read after a write copies stored text instead of writing 50,000 exports anew.
 *
 * Whether a stored export is still right is decided by versions, in the reader's own snapshot:
 * - `dataset_exports.rendered` is the catalog data version the export was rendered at (read in
 *   the same statement as the data);
 * - `dataset_export_changes.version` is the version of the last transaction that changed
 *   anything the dataset's export shows, written by the triggers below in that transaction.
 * A stored export is used only when `rendered >= version` (and its `format` is the running
 * code's). Writers bump the version row and hold its lock until commit, so versions follow
 * commit order: a render whose snapshot missed a write has a smaller version than that write's
 * stamp, whenever it is stored. Writers and the background refresher write different tables, so
 * neither waits for the other.
 *
 * `AFFECTED` gives, for each table an export reads, the datasets a set of its rows (`t`, taken
 * from the statement's transition tables) belongs to, and for a table whose rows also hold what
 * no export shows, the columns an export shows (`shown`): an update that changes none of them
 * (a person's login, a timestamp) stamps nothing. The SQL is written out here, not imported, so
 * this migration stays what it was when later code changes.
 */
const AFFECTED: Record<string, { datasets: string; shown?: string[] }> = {
  datasets: { datasets: 'SELECT t.id FROM t' },
  projects: {
    datasets: 'SELECT d.id FROM datasets d WHERE d.project_id IN (SELECT t.id FROM t)',
    shown: ['acronym', 'elu_accession'],
  },
  data_declarations: { datasets: 'SELECT t.dataset_id FROM t' },
  data_declaration_cohorts: {
    datasets: `SELECT dd.dataset_id FROM data_declarations dd
      WHERE dd.id IN (SELECT t.data_declaration_id FROM t)`,
  },
  cohorts: {
    datasets: `SELECT dd.dataset_id FROM data_declarations dd
      JOIN data_declaration_cohorts x ON x.data_declaration_id = dd.id
      WHERE x.cohort_id IN (SELECT t.id FROM t)`,
    shown: ['name', 'elu_accession'],
  },
  use_conditions: {
    datasets: `SELECT dd.dataset_id FROM data_declarations dd
      WHERE dd.id IN (SELECT t.data_declaration_id FROM t)`,
  },
  legal_bases: { datasets: 'SELECT t.dataset_id FROM t' },
  legal_basis_data_declarations: {
    datasets: `SELECT lb.dataset_id FROM legal_bases lb
      WHERE lb.id IN (SELECT t.legal_basis_id FROM t)`,
  },
  storage_locations: { datasets: 'SELECT t.dataset_id FROM t' },
  access_storage_locations: {
    datasets: `SELECT s.dataset_id FROM storage_locations s
      WHERE s.id IN (SELECT t.storage_location_id FROM t)`,
  },
  accesses: {
    datasets: `SELECT s.dataset_id FROM storage_locations s
      JOIN access_storage_locations x ON x.storage_location_id = s.id
      WHERE x.access_id IN (SELECT t.id FROM t)`,
    shown: ['access_notes'],
  },
  transfers: { datasets: 'SELECT t.dataset_id FROM t' },
  partners: {
    datasets: `SELECT tr.dataset_id FROM transfers tr WHERE tr.partner_id IN (SELECT t.id FROM t)
      UNION SELECT x.dataset_id FROM dataset_local_custodians x JOIN users u ON u.id = x.user_id
      WHERE u.affiliation_id IN (SELECT t.id FROM t)`,
    shown: ['name'],
  },
  dataset_local_custodians: { datasets: 'SELECT t.dataset_id FROM t' },
  users: {
    datasets:
      'SELECT x.dataset_id FROM dataset_local_custodians x WHERE x.user_id IN (SELECT t.id FROM t)',
    shown: ['first_name', 'last_name', 'email', 'affiliation_id'],
  },
};

/**
 * The body of a function that bumps the version once per writing transaction (as
 * BumpVersionOncePerTransaction): `bumped` then holds the new version; `returning` ends it.
 */
const bumpOnce = (returning: string) => `DECLARE
        bumped bigint;
    BEGIN
        IF current_setting('catalog.version_bumped_in', true) IS DISTINCT FROM txid_current()::text THEN
            UPDATE "catalog_version" SET "version" = "version" + 1 WHERE "id" = 1
                RETURNING "version" INTO bumped;
            PERFORM pg_notify('catalog_version', bumped::text);
            PERFORM set_config('catalog.version_bumped_in', txid_current()::text, true);
        END IF;
        ${returning}
    END`;

/** This transaction's version, bumped if it was not yet. */
const TRANSACTION_VERSION = `CREATE FUNCTION "catalog_transaction_version"() RETURNS bigint LANGUAGE plpgsql AS $$
    ${bumpOnce(`-- This transaction holds the row's lock since its bump: the value is its own.
        SELECT "version" INTO bumped FROM "catalog_version" WHERE "id" = 1;
        RETURN bumped;`)} $$`;

const BUMP_VIA_TRANSACTION_VERSION = `CREATE OR REPLACE FUNCTION "bump_catalog_version"() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM "catalog_transaction_version"();
        RETURN NULL;
    END $$`;

/** The trigger function as BumpVersionOncePerTransaction left it (for down). */
const BUMP_ONCE_PER_TRANSACTION = `CREATE OR REPLACE FUNCTION "bump_catalog_version"() RETURNS trigger LANGUAGE plpgsql AS $$
    ${bumpOnce('RETURN NULL;')} $$`;

/**
 * Stamps datasets with this transaction's version. A dataset stamped already by this
 * transaction is left as it is: an import changes one dataset in many statements, and updating
 * the same row again each time would leave a row version per statement.
 */
const STAMP = `CREATE FUNCTION "stamp_dataset_exports"(ids integer[]) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE
        stamp bigint;
    BEGIN
        IF cardinality(ids) = 0 THEN RETURN; END IF;
        stamp := "catalog_transaction_version"();
        INSERT INTO "dataset_export_changes" ("dataset_id", "version")
            SELECT DISTINCT id, stamp FROM unnest(ids) AS id WHERE id IS NOT NULL
            ON CONFLICT ("dataset_id") DO UPDATE SET "version" = excluded."version"
            WHERE "dataset_export_changes"."version" < excluded."version";
    END $$`;

const stampFunction = (table: string) => `"stamp_dataset_exports_${table}"`;

/**
 * The rows of `side` (an update's new_rows or old_rows) whose `shown` columns differ from those
 * of the same row (by id) on the `other` side.
 */
const changedRows = (side: string, other: string, shown: string[]) => {
  const of = (alias: string) => shown.map((column) => `${alias}.${column}`).join(', ');
  return `SELECT s.* FROM ${side} s JOIN ${other} o ON o.id = s.id
    WHERE ROW(${of('s')}) IS DISTINCT FROM ROW(${of('o')})`;
};

/**
 * A table's stamp trigger function. plpgsql plans a statement when it first runs it, so a
 * branch naming a transition table its event lacks never runs.
 */
const stampTrigger = (table: string, { datasets, shown }: (typeof AFFECTED)[string]) => {
  const stamp = (rows: string) =>
    `PERFORM "stamp_dataset_exports"(ARRAY(WITH t AS (${rows}) ${datasets}));`;
  const updated = (side: string, other: string) =>
    stamp(shown ? changedRows(side, other, shown) : `SELECT * FROM ${side}`);
  return `CREATE FUNCTION ${stampFunction(table)}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            ${stamp('SELECT * FROM new_rows')}
        ELSIF TG_OP = 'DELETE' THEN
            ${stamp('SELECT * FROM old_rows')}
        ELSE
            ${updated('new_rows', 'old_rows')}
            ${updated('old_rows', 'new_rows')}
        END IF;
        RETURN NULL;
    END $$`;
};

/** A transition table names a single event, so each table has three triggers. */
const EVENTS = [
  ['insert', 'INSERT', 'NEW TABLE AS new_rows'],
  ['update', 'UPDATE', 'OLD TABLE AS old_rows NEW TABLE AS new_rows'],
  ['delete', 'DELETE', 'OLD TABLE AS old_rows'],
] as const;

export class StoredDatasetExports1795700000000 implements MigrationInterface {
  name = 'StoredDatasetExports1795700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // `fields`: the export's JSON without its braces and without `source` (a setting of each
    // replica), which a read puts in front by plain concatenation (a substring would make
    // PostgreSQL count characters in every text). About 2 KB: kept in the row, uncompressed
    // (toast_tuple_target), a read copies them without a TOAST lookup or decompression each.
    await queryRunner.query(`CREATE TABLE "dataset_exports" (
        "dataset_id" integer NOT NULL PRIMARY KEY,
        "format" text NOT NULL,
        "rendered" bigint NOT NULL,
        "fields" text NOT NULL) WITH (toast_tuple_target = 8160)`);
    await queryRunner.query(`CREATE TABLE "dataset_export_changes" (
        "dataset_id" integer NOT NULL PRIMARY KEY,
        "version" bigint NOT NULL)`);
    // The triggers find a partner's and a user's datasets through these.
    await queryRunner.query(`CREATE INDEX "IDX_transfers_partner" ON "transfers" ("partner_id")`);
    await queryRunner.query(`CREATE INDEX "IDX_users_affiliation" ON "users" ("affiliation_id")`);
    await queryRunner.query(TRANSACTION_VERSION);
    await queryRunner.query(BUMP_VIA_TRANSACTION_VERSION);
    await queryRunner.query(STAMP);
    // TRUNCATE has no transition table (and may restart ids): every stored export goes.
    await queryRunner.query(`CREATE FUNCTION "forget_dataset_exports"() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            DELETE FROM "dataset_exports";
            RETURN NULL;
        END $$`);
    for (const [table, affected] of Object.entries(AFFECTED)) {
      await queryRunner.query(stampTrigger(table, affected));
      for (const [name, event, referencing] of EVENTS) {
        await queryRunner.query(`CREATE TRIGGER "${table}_stamp_dataset_exports_${name}"
            AFTER ${event} ON "${table}" REFERENCING ${referencing}
            FOR EACH STATEMENT EXECUTE FUNCTION ${stampFunction(table)}()`);
      }
      await queryRunner.query(`CREATE TRIGGER "${table}_forget_dataset_exports"
          AFTER TRUNCATE ON "${table}" FOR EACH STATEMENT EXECUTE FUNCTION "forget_dataset_exports"()`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of Object.keys(AFFECTED)) {
      await queryRunner.query(`DROP TRIGGER "${table}_forget_dataset_exports" ON "${table}"`);
      for (const [name] of EVENTS) {
        await queryRunner.query(
          `DROP TRIGGER "${table}_stamp_dataset_exports_${name}" ON "${table}"`,
        );
      }
      await queryRunner.query(`DROP FUNCTION ${stampFunction(table)}()`);
    }
    await queryRunner.query(`DROP FUNCTION "forget_dataset_exports"()`);
    await queryRunner.query(`DROP FUNCTION "stamp_dataset_exports"(integer[])`);
    await queryRunner.query(BUMP_ONCE_PER_TRANSACTION);
    await queryRunner.query(`DROP FUNCTION "catalog_transaction_version"()`);
    await queryRunner.query(`DROP INDEX "IDX_users_affiliation"`);
    await queryRunner.query(`DROP INDEX "IDX_transfers_partner"`);
    await queryRunner.query(`DROP TABLE "dataset_export_changes"`);
    await queryRunner.query(`DROP TABLE "dataset_exports"`);
  }
}
