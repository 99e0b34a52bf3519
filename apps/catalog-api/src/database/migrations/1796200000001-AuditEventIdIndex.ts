import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from './online-ddl';

const INDEX = 'UQ_audit_log_event_id';

/**
 * The trail's event ids are unique (a reported event is recorded once). Built CONCURRENTLY, in a
 * migration of its own outside a transaction: `audit_log` is written by the running release, and
 * a plain CREATE INDEX would block its writes for the whole build.
 */
export class AuditEventIdIndex1796200000001 implements MigrationInterface {
  name = 'AuditEventIdIndex1796200000001';

  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await createIndexConcurrently(queryRunner, INDEX, 'ON "audit_log" ("event_id")', {
      unique: true,
    });
  }

  /** A plain DROP: a down migration may run inside a transaction (undoLastMigration's default). */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS "${INDEX}"`);
  }
}
