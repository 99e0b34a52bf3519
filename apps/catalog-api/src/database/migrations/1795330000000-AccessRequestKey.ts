import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Makes the access-request webhook idempotent in the database: one access per (application,
 * dataset, requesting subject), so retried or concurrent deliveries cannot create a second one.
 * Also indexes the expiry date of accesses that are not yet terminated, for the daily expiry.
 */
export class AccessRequestKey1795330000000 implements MigrationInterface {
  name = 'AccessRequestKey1795330000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "accesses" ADD "request_subject" character varying(64)`);
    await queryRunner.query(
      `ALTER TABLE "accesses" ADD CONSTRAINT "UQ_accesses_request" UNIQUE ("application_id", "dataset_id", "request_subject")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_accesses_open_expiry" ON "accesses" ("grant_expires_on") WHERE "status" <> 'terminated'`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_accesses_open_expiry"`);
    await queryRunner.query(`ALTER TABLE "accesses" DROP CONSTRAINT "UQ_accesses_request"`);
    await queryRunner.query(`ALTER TABLE "accesses" DROP COLUMN "request_subject"`);
  }
}
