import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A subscription made or ended, by any writer (a replica's route, the CLI), is announced on
 * `webhook_subscriptions` (NOTIFY, delivered at commit): every replica's webhook sender keeps
 * whether there is any subscription at all, and without one runs no query (written by hand:
 * a statement trigger and its function; the cursor's UPDATE on every fan-out is not announced).
 */
export class WebhookSubscriptionsNotify1796500000000 implements MigrationInterface {
  name = 'WebhookSubscriptionsNotify1796500000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION webhook_subscriptions_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('webhook_subscriptions', TG_OP);
        RETURN NULL;
      END $$`);
    await queryRunner.query(`CREATE TRIGGER webhook_subscriptions_notify
      AFTER INSERT OR DELETE OR TRUNCATE ON webhook_subscriptions
      FOR EACH STATEMENT EXECUTE FUNCTION webhook_subscriptions_notify()`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER webhook_subscriptions_notify ON webhook_subscriptions`);
    await queryRunner.query(`DROP FUNCTION webhook_subscriptions_notify()`);
  }
}
