import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook subscriptions and their outbox (generated, then reviewed: the generator's drops of the
 * storage indexes it does not model, and its no-op on `audit_log.event_id`'s default, are
 * removed; the foreign key, which drops a subscription's messages with it, is added by hand).
 */
export class WebhookSubscriptions1796300000000 implements MigrationInterface {
  name = 'WebhookSubscriptions1796300000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "webhook_subscriptions" ("id" SERIAL NOT NULL, "url" character varying(2000) NOT NULL, "events" character varying(64) array, "secret" character varying(200) NOT NULL, "cursor" bigint NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_bf631ae77d39849d599817fb6f4" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "webhook_deliveries" ("id" BIGSERIAL NOT NULL, "subscription_id" integer NOT NULL, "seq" bigint NOT NULL, "subject" character varying(320) NOT NULL, "state" character varying(16) NOT NULL DEFAULT 'pending', "attempts" integer NOT NULL DEFAULT '0', "next_attempt_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "lease_until" TIMESTAMP WITH TIME ZONE, "last_error" character varying(500), "delivered_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_535dd409947fb6d8fc6dfc0112a" PRIMARY KEY ("id"),
       CONSTRAINT "FK_webhook_deliveries_subscription" FOREIGN KEY ("subscription_id") REFERENCES "webhook_subscriptions"("id") ON DELETE CASCADE)`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_webhook_deliveries_pending" ON "webhook_deliveries"  ("subscription_id", "subject", "seq") WHERE "state" = 'pending'`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_webhook_deliveries_subscription_seq" ON "webhook_deliveries"  ("subscription_id", "seq") `,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "webhook_deliveries"`);
    await queryRunner.query(`DROP TABLE "webhook_subscriptions"`);
  }
}
