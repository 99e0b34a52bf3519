import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The latest REMS revocation per entitlement key, so that deliveries REMS retries out of order
 * cannot undo a revocation (a grant built before it) or a re-grant (a revocation older than it).
 */
export class AccessRequestRevocations1795400000002 implements MigrationInterface {
  name = 'AccessRequestRevocations1795400000002';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "access_request_revocations" ("application_id" integer NOT NULL, "dataset_id" integer NOT NULL, "request_subject" character varying(64) NOT NULL, "revoked_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_8d75ee97faddc18ce9c3a4e5196" PRIMARY KEY ("application_id", "dataset_id", "request_subject"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "access_request_revocations" ADD CONSTRAINT "FK_779201bc2b27d2a88e08f559f8d" FOREIGN KEY ("dataset_id") REFERENCES "datasets"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "access_request_revocations" DROP CONSTRAINT "FK_779201bc2b27d2a88e08f559f8d"`,
    );
    await queryRunner.query(`DROP TABLE "access_request_revocations"`);
  }
}
