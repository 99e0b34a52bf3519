import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The term vocabularies (handwritten: the trigram index is an expression index with an operator
 * class, which TypeORM cannot generate). `pg_trgm` is a trusted extension since PostgreSQL 13, so
 * the database owner may create it without superuser rights.
 */
export class CreateTerms1795327223214 implements MigrationInterface {
  name = 'CreateTerms1795327223214';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await queryRunner.query(`
      CREATE TABLE "terms" (
        "id" SERIAL NOT NULL,
        "category" text NOT NULL,
        "term_id" text NOT NULL,
        "label" text NOT NULL,
        CONSTRAINT "PK_terms" PRIMARY KEY ("id"),
        CONSTRAINT "UQ_terms_category_term_id" UNIQUE ("category", "term_id"),
        CONSTRAINT "CHK_terms_category" CHECK ("category" IN ('disease', 'phenotype', 'study', 'gene'))
      )`);
    // Finds `lower(label) LIKE '%…%'` candidates for searches of three characters or more.
    await queryRunner.query(
      `CREATE INDEX "IDX_terms_label_trgm" ON "terms" USING gin (lower("label") gin_trgm_ops)`,
    );
    // Label order within a category: serves exact and prefix matches as range scans and lets a
    // common substring be read in result order, stopping after one page (docs/decisions/term-search-ranks.md).
    await queryRunner.query(
      `CREATE INDEX "IDX_terms_category_label" ON "terms" ("category", (lower("label") COLLATE "C"), "id")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // pg_trgm stays: other objects may use it, and keeping it is harmless.
    await queryRunner.query(`DROP TABLE "terms"`);
  }
}
