import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit trail (generated, then reviewed). No version-bump trigger: the log is not catalog
 * data and reading it is never cached.
 */
export class AuditLog1795327741625 implements MigrationInterface {
  name = 'AuditLog1795327741625';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "audit_log" ("id" BIGSERIAL NOT NULL, "at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "actor_kind" character varying(32) NOT NULL, "actor_id" character varying(150), "actor_name" character varying(255), "action" character varying(64) NOT NULL, "object_type" character varying(64) NOT NULL, "object_id" character varying(255), "change" jsonb NOT NULL DEFAULT '{}', CONSTRAINT "PK_07fefa57f7f5ab8fc3f52b3ed0b" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_audit_log_object" ON "audit_log"  ("object_type", "object_id", "at") `,
    );
    await queryRunner.query(`CREATE INDEX "IDX_audit_log_at" ON "audit_log"  ("at") `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_audit_log_at"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_audit_log_object"`);
    await queryRunner.query(`DROP TABLE "audit_log"`);
  }
}
