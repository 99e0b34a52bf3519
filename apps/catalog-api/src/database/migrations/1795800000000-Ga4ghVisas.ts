import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Signed GA4GH visas, kept until their access changes (one per access: `version` is the hash
 * of everything the visa says, so a changed grant, key or setting is signed again), and every
 * key that ever signed one with the latest `exp` it signed, so /api/jwk lists a retired key
 * until its last visa has expired. No version-bump trigger: these rows are derived, not
 * catalog data.
 */
export class Ga4ghVisas1795800000000 implements MigrationInterface {
  name = 'Ga4ghVisas1795800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "ga4gh_visas" (
      "access_id" integer PRIMARY KEY REFERENCES "accesses" ("id") ON DELETE CASCADE,
      "version" character(64) NOT NULL,
      "jws" text NOT NULL,
      "expires_at" timestamptz NOT NULL,
      "signed_at" timestamptz NOT NULL DEFAULT now())`);
    await queryRunner.query(`CREATE TABLE "ga4gh_visa_keys" (
      "kid" character varying(200) PRIMARY KEY,
      "public_jwk" jsonb NOT NULL,
      "last_expires_at" timestamptz NOT NULL)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "ga4gh_visa_keys"`);
    await queryRunner.query(`DROP TABLE "ga4gh_visas"`);
  }
}
