import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from './online-ddl';

const OLD_INDEX = 'UQ_storage_locations_dataset_platform_location';
const NEW_INDEX = 'UQ_storage_locations_dataset_platform_location_digest';

/**
 * One storage row per (dataset, platform, location), with the location held in the unique index
 * by its SHA-256: a btree entry holds at most about 2,700 bytes, and a location may be 4,000
 * characters (up to 16,000 bytes of UTF-8). `storage_location_digest` is immutable, as an index
 * expression must be: `convert_to` is only stable because it depends on the database's
 * encoding, which never changes for a database.
 *
 * The new index is built (CONCURRENTLY: the table's reads and writes go on) before the old one
 * goes, so uniqueness never lapses; each step can run again after an interruption. The previous
 * release's registration upsert names the old index's expression; once
 * it is gone that release's registrations answer 500 and the provisioner retries them on the new
 * release (docs/decisions/storage-location-digest.md). Nothing else of that release uses it.
 */
export class StorageLocationDigest1796000000000 implements MigrationInterface {
  name = 'StorageLocationDigest1796000000000';

  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE OR REPLACE FUNCTION "storage_location_digest"(location text)
      RETURNS bytea LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT sha256(convert_to(COALESCE(location, ''), 'UTF8')) $$`);
    await createIndexConcurrently(
      queryRunner,
      NEW_INDEX,
      `ON "storage_locations" ("dataset_id", "platform", "storage_location_digest"("location"))`,
      { unique: true },
    );
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS "${OLD_INDEX}"`);
  }

  /** Back to the old index: fails while a location is too long for it (remove those first). */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE UNIQUE INDEX "${OLD_INDEX}"
      ON "storage_locations" ("dataset_id", "platform", (COALESCE("location", '')))`);
    await queryRunner.query(`DROP INDEX "${NEW_INDEX}"`);
    await queryRunner.query(`DROP FUNCTION "storage_location_digest"(text)`);
  }
}
