import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the provisioner knows of a registered copy: its total bytes and the SHA-256 of its stored
 * manifest (the list of every file's SHA-256), published as the DCAT distribution's
 * `dcat:byteSize` and `spdx:checksum`. Null where not registered (hand-entered copies, older
 * provisioners). The checks hold the table to what the registration route accepts.
 */
export class StorageCopyBytesAndChecksum1795900000000 implements MigrationInterface {
  name = 'StorageCopyBytesAndChecksum1795900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "storage_locations"
      ADD "byte_size" bigint,
      ADD "manifest_sha256" character(64),
      ADD CONSTRAINT "CHK_storage_locations_byte_size" CHECK ("byte_size" >= 0),
      ADD CONSTRAINT "CHK_storage_locations_manifest_sha256"
        CHECK ("manifest_sha256" ~ '^[0-9a-f]{64}$')`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "storage_locations"
      DROP CONSTRAINT "CHK_storage_locations_manifest_sha256",
      DROP CONSTRAINT "CHK_storage_locations_byte_size",
      DROP COLUMN "manifest_sha256",
      DROP COLUMN "byte_size"`);
  }
}
