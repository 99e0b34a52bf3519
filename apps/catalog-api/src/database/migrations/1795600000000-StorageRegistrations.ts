import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What makes a registration from the provisioner happen once whatever the retries: one storage
 * row per (dataset, platform, location) and one transfer per import. A location may be null
 * (hand-entered records), so the uniqueness is over `COALESCE(location, '')`. Existing
 * duplicate storage rows are merged into the oldest first (their access links move with them).
 */
export class StorageRegistrations1795600000000 implements MigrationInterface {
  name = 'StorageRegistrations1795600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      WITH ranked AS (
        SELECT id, min(id) OVER (PARTITION BY dataset_id, platform, COALESCE(location, '')) AS keep
        FROM storage_locations
      ), moved AS (
        INSERT INTO access_storage_locations (access_id, storage_location_id)
        SELECT x.access_id, r.keep FROM access_storage_locations x
        JOIN ranked r ON r.id = x.storage_location_id AND r.id <> r.keep
        ON CONFLICT DO NOTHING
      )
      DELETE FROM storage_locations s USING ranked r WHERE s.id = r.id AND r.id <> r.keep`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_storage_locations_dataset_platform_location" ON "storage_locations" ("dataset_id", "platform", (COALESCE("location", '')))`,
    );
    await queryRunner.query(`ALTER TABLE "transfers" ADD "import_id" character varying(255)`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_transfers_import_id" ON "transfers" ("import_id") WHERE "import_id" IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."UQ_transfers_import_id"`);
    await queryRunner.query(`ALTER TABLE "transfers" DROP COLUMN "import_id"`);
    await queryRunner.query(`DROP INDEX "public"."UQ_storage_locations_dataset_platform_location"`);
  }
}
