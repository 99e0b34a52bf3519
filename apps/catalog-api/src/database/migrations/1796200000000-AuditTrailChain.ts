import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit log becomes the hash-chained trail (generated, then reviewed: the generator's
 * drops of the storage indexes it does not model are removed; the chaining of existing rows,
 * the functions and the triggers are written by hand).
 *
 * - `audit_log_body(row)`: the exact text an entry's hash covers, a JSON array of its fields
 *   (`json_build_array` keeps the order; `change` is printed as jsonb prints it). The verifier
 *   and the exports read it from here, so there is one definition.
 * - `audit_log_chain()` (BEFORE INSERT, each row): locks the head row (a transaction's first
 *   entry), gives the row the next position, the chaining time, the previous hash, and
 *   `sha256(prev_hash || body)`; `audit_log_move_head()` (deferred to commit) moves the head. The lock is the transaction's (no session state: safe behind transaction-mode
 *   PgBouncer) and serialises appends from every replica; a rollback gives the position back.
 * - `audit_log_append_only()` (BEFORE UPDATE OR DELETE, each row): refuses, except a delete
 *   inside the pruning transaction, which sets `audit.prune` locally after signing a checkpoint.
 *
 * Existing rows are renumbered 1..n in their order and chained from 32 zero bytes.
 */
export class AuditTrailChain1796200000000 implements MigrationInterface {
  name = 'AuditTrailChain1796200000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "audit_checkpoints" ("seq" bigint NOT NULL, "hash" bytea NOT NULL, "entry_at" TIMESTAMP WITH TIME ZONE NOT NULL, "signed_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "key_id" character varying(100) NOT NULL, "jws" text NOT NULL, CONSTRAINT "PK_00d27c519361818fba5bb6602de" PRIMARY KEY ("seq"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "audit_log_head" ("id" smallint NOT NULL, "seq" bigint NOT NULL, "hash" bytea NOT NULL, CONSTRAINT "CHK_audit_log_head_one_row" CHECK ("id" = 1), CONSTRAINT "PK_e4fb9057c8cf44bff4fac58526c" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "audit_log" ADD "event_id" uuid NOT NULL DEFAULT gen_random_uuid()`,
    );
    await queryRunner.query(`ALTER TABLE "audit_log" ADD "prev_hash" bytea`);
    await queryRunner.query(`ALTER TABLE "audit_log" ADD "hash" bytea`);
    await queryRunner.query(`ALTER TABLE "audit_log" ALTER COLUMN "id" DROP DEFAULT`);
    await queryRunner.query(`DROP SEQUENCE "audit_log_id_seq"`);

    await queryRunner.query(`
      CREATE FUNCTION audit_log_body(e audit_log) RETURNS text LANGUAGE sql STABLE AS $$
        SELECT json_build_array(
          e.id, e.event_id,
          to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
          e.actor_kind, e.actor_id, e.actor_name, e.action, e.object_type, e.object_id, e.change
        )::text
      $$`);
    await queryRunner.query(`
      DO $$
      DECLARE
        r record;
        n bigint := 0;
        prev bytea := decode(repeat('00', 32), 'hex');
        next bytea;
      BEGIN
        FOR r IN SELECT id FROM audit_log ORDER BY id LOOP
          n := n + 1;
          UPDATE audit_log SET id = n WHERE id = r.id;
          SELECT sha256(prev || convert_to(audit_log_body(a), 'UTF8')) INTO next
            FROM audit_log a WHERE a.id = n;
          UPDATE audit_log SET prev_hash = prev, hash = next WHERE id = n;
          prev := next;
        END LOOP;
        INSERT INTO audit_log_head (id, seq, hash) VALUES (1, n, prev);
      END $$`);
    await queryRunner.query(`ALTER TABLE "audit_log" ALTER COLUMN "prev_hash" SET NOT NULL`);
    await queryRunner.query(`ALTER TABLE "audit_log" ALTER COLUMN "hash" SET NOT NULL`);

    // The head is read and locked at a transaction's first entry; its later entries chain from
    // the position and hash kept in transaction-local settings, and the head row is written once,
    // at commit (a deferred trigger, by the last entry): rewriting one row per entry made a
    // transaction of n entries cost n² (each update walks the row's chain of versions).
    await queryRunner.query(`
      CREATE FUNCTION audit_log_chain() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        cached text := current_setting('audit.chain_seq', true);
        head_seq bigint;
        head_hash bytea;
      BEGIN
        IF cached IS NULL OR cached = '' THEN
          SELECT seq, hash INTO head_seq, head_hash FROM audit_log_head WHERE id = 1 FOR UPDATE;
        ELSE
          head_seq := cached::bigint;
          head_hash := decode(current_setting('audit.chain_hash'), 'hex');
        END IF;
        NEW.id := head_seq + 1;
        NEW.at := clock_timestamp();
        NEW.prev_hash := head_hash;
        NEW.hash := sha256(head_hash || convert_to(audit_log_body(NEW), 'UTF8'));
        PERFORM set_config('audit.chain_seq', NEW.id::text, true);
        PERFORM set_config('audit.chain_hash', encode(NEW.hash, 'hex'), true);
        RETURN NEW;
      END $$`);
    await queryRunner.query(`
      CREATE FUNCTION audit_log_move_head() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.id = current_setting('audit.chain_seq')::bigint THEN
          UPDATE audit_log_head SET seq = NEW.id, hash = NEW.hash WHERE id = 1;
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' AND current_setting('audit.prune', true) = 'on' THEN
          RETURN OLD;
        END IF;
        RAISE EXCEPTION 'audit_log is append-only (% refused)', TG_OP
          USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await queryRunner.query(`CREATE TRIGGER audit_log_chain BEFORE INSERT ON audit_log
      FOR EACH ROW EXECUTE FUNCTION audit_log_chain()`);
    await queryRunner.query(`CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
      FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()`);
    await queryRunner.query(`CREATE CONSTRAINT TRIGGER audit_log_move_head AFTER INSERT ON audit_log
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit_log_move_head()`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER audit_log_move_head ON audit_log`);
    await queryRunner.query(`DROP TRIGGER audit_log_append_only ON audit_log`);
    await queryRunner.query(`DROP TRIGGER audit_log_chain ON audit_log`);
    await queryRunner.query(`DROP FUNCTION audit_log_move_head()`);
    await queryRunner.query(`DROP FUNCTION audit_log_append_only()`);
    await queryRunner.query(`DROP FUNCTION audit_log_chain()`);
    await queryRunner.query(`DROP FUNCTION audit_log_body(audit_log)`);
    await queryRunner.query(
      `CREATE SEQUENCE IF NOT EXISTS "audit_log_id_seq" OWNED BY "audit_log"."id"`,
    );
    await queryRunner.query(
      `SELECT setval('"audit_log_id_seq"', (SELECT coalesce(max(id), 0) + 1 FROM audit_log), false)`,
    );
    await queryRunner.query(
      `ALTER TABLE "audit_log" ALTER COLUMN "id" SET DEFAULT nextval('"audit_log_id_seq"')`,
    );
    await queryRunner.query(`ALTER TABLE "audit_log" DROP COLUMN "hash"`);
    await queryRunner.query(`ALTER TABLE "audit_log" DROP COLUMN "prev_hash"`);
    await queryRunner.query(`ALTER TABLE "audit_log" DROP COLUMN "event_id"`);
    await queryRunner.query(`DROP TABLE "audit_log_head"`);
    await queryRunner.query(`DROP TABLE "audit_checkpoints"`);
  }
}
