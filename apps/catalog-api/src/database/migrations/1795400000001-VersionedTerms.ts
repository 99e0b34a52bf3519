import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Term vocabularies become versioned data like the rest of the catalog: every statement that
 * changes `terms` bumps (and announces) the data version, so term searches can be answered from
 * the response caches. Vocabularies change rarely (an upload, a CLI load), so the cost is that
 * such a load also turns over the cached catalog responses.
 */
export class VersionedTerms1795400000001 implements MigrationInterface {
  name = 'VersionedTerms1795400000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TRIGGER "terms_bump_catalog_version"
                AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "terms"
                FOR EACH STATEMENT EXECUTE FUNCTION "bump_catalog_version"()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "terms_bump_catalog_version" ON "terms"`);
  }
}
