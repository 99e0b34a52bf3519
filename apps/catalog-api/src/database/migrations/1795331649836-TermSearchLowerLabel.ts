import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Term search at 100,000 terms (handwritten: a generated column with a collation, a trigram
 * operator class and an index on a function result are beyond what TypeORM generates; the
 * column is declared on the entity so `migration:generate` sees no drift).
 *
 * - `label_lower`: `lower(label)` stored once, in byte order ("C"), instead of recomputed for
 *   every row a search looks at.
 * - `term_short_grams()`: every 1- and 2-character substring of a label. Its GIN index finds
 *   the rows containing a rare 1–2-character search, which trigrams cannot (a pattern that short
 *   holds no complete trigram, so Postgres used to scan the whole category).
 *
 * `terms` is not among the data-version tables (term search is not cached), and this adds no
 * table, so there is no trigger to keep in step.
 */
export class TermSearchLowerLabel1795331649836 implements MigrationInterface {
  name = 'TermSearchLowerLabel1795331649836';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "terms" ADD "label_lower" text COLLATE "C" GENERATED ALWAYS AS (lower("label")) STORED NOT NULL`,
    );
    // TypeORM reads a generated column's expression back from this table (its own layout); without
    // the row `migration:generate` fails on the column. The database name is the one migrated.
    await queryRunner.query(`CREATE TABLE IF NOT EXISTS "typeorm_metadata" (
        "type" varchar NOT NULL, "database" varchar, "schema" varchar, "table" varchar,
        "name" varchar, "value" text)`);
    await queryRunner.query(`INSERT INTO "typeorm_metadata" ("database", "schema", "table", "type", "name", "value")
        VALUES (current_database(), current_schema(), 'terms', 'GENERATED_COLUMN', 'label_lower', 'lower("label")')`);
    // IMMUTABLE is true: the result depends on the argument only. Written in SQL so it needs no
    // search_path (every function it calls lives in pg_catalog).
    await queryRunner.query(`
      CREATE FUNCTION "term_short_grams"(text) RETURNS text[]
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        AS $$
          SELECT coalesce(array_agg(substr($1, start, size)), '{}')
            FROM generate_series(1, char_length($1)) AS start,
                 (VALUES (1), (2)) AS sizes(size)
           WHERE start + size - 1 <= char_length($1)
        $$`);
    await queryRunner.query(`DROP INDEX "IDX_terms_label_trgm"`);
    await queryRunner.query(`DROP INDEX "IDX_terms_category_label"`);
    await queryRunner.query(
      `CREATE INDEX "IDX_terms_label_lower_trgm" ON "terms" USING gin ("label_lower" gin_trgm_ops)`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_terms_category_label_lower" ON "terms" ("category", "label_lower", "id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_terms_short_grams" ON "terms" USING gin ("term_short_grams"("label_lower"))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "IDX_terms_short_grams"`);
    await queryRunner.query(`DROP INDEX "IDX_terms_category_label_lower"`);
    await queryRunner.query(`DROP INDEX "IDX_terms_label_lower_trgm"`);
    await queryRunner.query(`ALTER TABLE "terms" DROP COLUMN "label_lower"`);
    await queryRunner.query(
      `DELETE FROM "typeorm_metadata" WHERE "type" = 'GENERATED_COLUMN' AND "table" = 'terms' AND "name" = 'label_lower'`,
    );
    await queryRunner.query(`DROP FUNCTION "term_short_grams"(text)`);
    await queryRunner.query(
      `CREATE INDEX "IDX_terms_label_trgm" ON "terms" USING gin (lower("label") gin_trgm_ops)`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_terms_category_label" ON "terms" ("category", (lower("label") COLLATE "C"), "id")`,
    );
  }
}
