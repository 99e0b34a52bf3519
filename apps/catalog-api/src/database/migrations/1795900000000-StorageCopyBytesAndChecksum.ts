import type { MigrationInterface, QueryRunner } from 'typeorm';
import { addCheckConstraint } from './online-ddl';

/**
 * What the provisioner knows of a registered copy: its total bytes and the SHA-256 of its stored
 * manifest (the list of every file's SHA-256), published as the DCAT distribution's
 * `dcat:byteSize` and `spdx:checksum`. Null where not registered (hand-entered copies, older
 * provisioners). The checks hold the table to what the registration route accepts.
 * Outside a transaction, so the checks are validated after the columns are added, without the
 * table's exclusive lock (docs/operations.md, "Schema changes").
 */
export class StorageCopyBytesAndChecksum1795900000000 implements MigrationInterface {
  name = 'StorageCopyBytesAndChecksum1795900000000';

  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "storage_locations"
      ADD COLUMN IF NOT EXISTS "byte_size" bigint,
      ADD COLUMN IF NOT EXISTS "manifest_sha256" character(64)`);
    await addCheckConstraint(
      queryRunner,
      'storage_locations',
      'CHK_storage_locations_byte_size',
      '"byte_size" >= 0',
    );
    await addCheckConstraint(
      queryRunner,
      'storage_locations',
      'CHK_storage_locations_manifest_sha256',
      `"manifest_sha256" ~ '^[0-9a-f]{64}$'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "storage_locations"
      DROP CONSTRAINT "CHK_storage_locations_manifest_sha256",
      DROP CONSTRAINT "CHK_storage_locations_byte_size",
      DROP COLUMN "manifest_sha256",
      DROP COLUMN "byte_size"`);
  }
}
