import type { QueryRunner } from 'typeorm';

/**
 * Schema changes of a table the running release uses, made so that it keeps working during
 * them (docs/operations.md, "Schema changes"). Each helper can run again after an interruption,
 * so a migration made of them runs outside a transaction (`transaction = false`), every
 * statement committing on its own and holding its lock only as long as it runs.
 */

/**
 * `CREATE [UNIQUE] INDEX CONCURRENTLY`: reads and writes of the table go on during the build.
 * An interrupted build leaves an INVALID index behind, which is dropped first.
 * `definition` is what follows the name, e.g. `ON "transfers" ("partner_id")`.
 */
export async function createIndexConcurrently(
  queryRunner: QueryRunner,
  name: string,
  definition: string,
  { unique = false }: { unique?: boolean } = {},
): Promise<void> {
  const [left] = (await queryRunner.query(
    `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE c.relname = $1 AND pg_table_is_visible(c.oid)`,
    [name],
  )) as { valid: boolean }[];
  if (left?.valid === false) await queryRunner.query(`DROP INDEX CONCURRENTLY "${name}"`);
  await queryRunner.query(
    `CREATE ${unique ? 'UNIQUE ' : ''}INDEX CONCURRENTLY IF NOT EXISTS "${name}" ${definition}`,
  );
}

/**
 * A CHECK constraint added `NOT VALID` (the brief lock of adding it, no scan), then validated in
 * a statement of its own, which scans the table without blocking its reads and writes.
 */
export async function addCheckConstraint(
  queryRunner: QueryRunner,
  table: string,
  name: string,
  expression: string,
): Promise<void> {
  const present = (await queryRunner.query(
    'SELECT 1 FROM pg_constraint WHERE conname = $1 AND conrelid = $2::regclass',
    [name, `"${table}"`],
  )) as unknown[];
  if (present.length === 0)
    await queryRunner.query(
      `ALTER TABLE "${table}" ADD CONSTRAINT "${name}" CHECK (${expression}) NOT VALID`,
    );
  await queryRunner.query(`ALTER TABLE "${table}" VALIDATE CONSTRAINT "${name}"`);
}
