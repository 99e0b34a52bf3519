import type { MigrationInterface, QueryRunner } from 'typeorm';
import { addCheckConstraint } from './online-ddl';

/**
 * The GA4GH DRS URI of a registered copy (`drs://<host>/<id>`, the dataset as a DRS compound
 * object), which the provisioner registers when it serves DRS; the DCAT distribution of the copy
 * points at it. Null where not registered. The check holds the table to what the route accepts.
 * Outside a transaction, so the check is validated after the column is added, without the
 * table's exclusive lock (docs/operations.md, "Schema changes").
 */
export class StorageCopyDrsUri1796100000000 implements MigrationInterface {
  name = 'StorageCopyDrsUri1796100000000';

  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "storage_locations" ADD COLUMN IF NOT EXISTS "drs_uri" character varying(2000)`,
    );
    await addCheckConstraint(
      queryRunner,
      'storage_locations',
      'CHK_storage_locations_drs_uri',
      `"drs_uri" ~ '^drs://'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "storage_locations"
      DROP CONSTRAINT "CHK_storage_locations_drs_uri",
      DROP COLUMN "drs_uri"`);
  }
}
