import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A dataset's own EJP RD Virtual Platform flag (`ejp:vpConnection ejp:VPDiscoverable` in the
 * FAIR Data Point). Generated, then reviewed: the generator's drops of the indexes and the
 * foreign key it does not model, and its no-op on `audit_log.event_id`'s default, are removed.
 * A boolean with a constant default is added without rewriting the table (PostgreSQL 11+), so
 * the release before keeps working on it (docs/operations.md, "Schema changes").
 */
export class DatasetVpDiscoverable1796450000000 implements MigrationInterface {
  name = 'DatasetVpDiscoverable1796450000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "datasets" ADD "vp_discoverable" boolean NOT NULL DEFAULT false`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "datasets" DROP COLUMN "vp_discoverable"`);
  }
}
