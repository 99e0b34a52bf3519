import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every bump of the catalog data version is also announced with NOTIFY on the channel
 * `catalog_version`, payload the new version. Postgres delivers a notification only when the
 * bumping transaction commits, in commit order, so a replica that LISTENs knows the current
 * version without asking on every request (see CatalogVersionTracker).
 */
export class NotifyCatalogVersion1795400000000 implements MigrationInterface {
  name = 'NotifyCatalogVersion1795400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE OR REPLACE FUNCTION "bump_catalog_version"() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE
                bumped bigint;
            BEGIN
                UPDATE "catalog_version" SET "version" = "version" + 1 WHERE "id" = 1
                    RETURNING "version" INTO bumped;
                PERFORM pg_notify('catalog_version', bumped::text);
                RETURN NULL;
            END $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE OR REPLACE FUNCTION "bump_catalog_version"() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE "catalog_version" SET "version" = "version" + 1 WHERE "id" = 1;
                RETURN NULL;
            END $$`);
  }
}
