import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Failed authentications per client address, shared by every replica (see
 * PostgresAuthFailuresRepository in libs/auth). UNLOGGED: counters need no WAL and no standby
 * copy; a crash only forgives some failures. No trigger bumps the catalog version: these rows
 * are not catalog data, so a flood of wrong keys never invalidates the read caches.
 */
export class AuthFailures1795500000000 implements MigrationInterface {
  name = 'AuthFailures1795500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE UNLOGGED TABLE "auth_failures" (
      "client" text PRIMARY KEY,
      "window_started_at" timestamptz NOT NULL,
      "failures" integer NOT NULL,
      "blocked_until" timestamptz
    )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "auth_failures"`);
  }
}
