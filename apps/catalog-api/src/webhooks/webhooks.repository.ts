import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';

export interface SubscriptionRow {
  id: number;
  url: string;
  events: string[] | null;
  created_at: Date;
}

export interface DeadLetterRow {
  id: string;
  seq: string;
  subject: string;
  attempts: number;
  last_error: string | null;
}

/** A message taken for sending: its delivery, its subscription and its trail entry. */
export interface DueMessage {
  id: string;
  attempts: number;
  url: string;
  secret: string;
  event_id: string;
  seq: string;
  at: Date;
  type: string;
  actor_kind: string;
  actor_id: string | null;
  actor_name: string | null;
  object_type: string;
  object_id: string | null;
  change: Record<string, unknown>;
  hash: Buffer;
  prev_hash: Buffer;
}

/** The channel a subscription made or ended is announced on (the migrations' trigger). */
export const WEBHOOK_SUBSCRIPTIONS_CHANNEL = 'webhook_subscriptions';

@Injectable()
export class WebhooksRepository {
  /** Whether any subscription exists (without one, the sender has nothing to do). */
  async anySubscription(manager: EntityManager): Promise<boolean> {
    const [row] = await manager.query<{ any: boolean }[]>(
      'SELECT EXISTS (SELECT 1 FROM webhook_subscriptions) AS any',
    );
    return row.any;
  }

  /** A new subscription, starting after the trail's current head. */
  async insert(
    manager: EntityManager,
    url: string,
    events: string[] | null,
    secret: string,
  ): Promise<SubscriptionRow> {
    const [row] = await manager.query<SubscriptionRow[]>(
      `INSERT INTO webhook_subscriptions (url, events, secret, cursor)
       SELECT $1, $2, $3, seq FROM audit_log_head WHERE id = 1
       RETURNING id, url, events, created_at`,
      [url, events, secret],
    );
    return row;
  }

  list(manager: EntityManager): Promise<SubscriptionRow[]> {
    return manager.query<SubscriptionRow[]>(
      'SELECT id, url, events, created_at FROM webhook_subscriptions ORDER BY id',
    );
  }

  async delete(manager: EntityManager, id: number): Promise<boolean> {
    const [, affected] = await manager.query<[unknown, number]>(
      'DELETE FROM webhook_subscriptions WHERE id = $1',
      [id],
    );
    return affected > 0;
  }

  async exists(manager: EntityManager, id: number): Promise<boolean> {
    const rows = await manager.query<unknown[]>(
      'SELECT 1 FROM webhook_subscriptions WHERE id = $1',
      [id],
    );
    return rows.length > 0;
  }

  deadLetters(manager: EntityManager, id: number, limit: number): Promise<DeadLetterRow[]> {
    return manager.query<DeadLetterRow[]>(
      `SELECT id::text AS id, seq::text AS seq, subject, attempts, last_error
       FROM webhook_deliveries WHERE subscription_id = $1 AND state = 'dead'
       ORDER BY seq LIMIT $2`,
      [id, limit],
    );
  }

  /** Dead messages of the subscription (all, or those of `ids`) back to pending, due now. */
  async replay(manager: EntityManager, id: number, ids: string[] | null): Promise<number> {
    const [{ n }] = await manager.query<{ n: number }[]>(
      `WITH again AS (
         UPDATE webhook_deliveries
         SET state = 'pending', attempts = 0, next_attempt_at = now(), lease_until = NULL
         WHERE subscription_id = $1 AND state = 'dead' AND ($2::bigint[] IS NULL OR id = ANY($2))
         RETURNING 1)
       SELECT count(*)::int AS n FROM again`,
      [id, ids],
    );
    return n;
  }

  /**
   * Copies the trail entries after each subscription's cursor (at most `batch` each) into its
   * outbox and moves the cursors, in the caller's transaction. Entries up to the head are all
   * committed: the head's lock is held until an appending transaction commits.
   */
  async fanOut(manager: EntityManager, batch: number): Promise<number> {
    const [{ n }] = await manager.query<{ n: number }[]>(
      `WITH head AS (SELECT seq FROM audit_log_head WHERE id = 1),
       subs AS (
         SELECT s.id, s.events, s.cursor, LEAST((SELECT seq FROM head), s.cursor + $1) AS upto
         FROM webhook_subscriptions s
         WHERE s.cursor < (SELECT seq FROM head)
         FOR UPDATE OF s
       ),
       added AS (
         INSERT INTO webhook_deliveries (subscription_id, seq, subject)
         SELECT subs.id, a.id, a.object_type || ':' || coalesce(a.object_id, '')
         FROM subs JOIN audit_log a ON a.id > subs.cursor AND a.id <= subs.upto
         WHERE subs.events IS NULL OR (a.object_type || '.' || a.action) = ANY(subs.events)
         ON CONFLICT DO NOTHING
         RETURNING 1
       ),
       moved AS (
         UPDATE webhook_subscriptions s SET cursor = subs.upto FROM subs WHERE s.id = subs.id
         RETURNING 1
       )
       SELECT (SELECT count(*)::int FROM added) + 0 * (SELECT count(*) FROM moved) AS n`,
      [batch],
    );
    return n;
  }

  /**
   * Takes up to `limit` due messages for `leaseSeconds`: per subscription and subject only the
   * earliest pending one, so a subject's messages go out one after another in trail order.
   * The lease is checked again on the row being updated, so two replicas never take one message.
   */
  take(manager: EntityManager, limit: number, leaseSeconds: number): Promise<DueMessage[]> {
    return manager.query<DueMessage[]>(
      `WITH heads AS (
         SELECT DISTINCT ON (subscription_id, subject) id, next_attempt_at
         FROM webhook_deliveries WHERE state = 'pending'
         ORDER BY subscription_id, subject, seq
       ),
       taken AS (
         UPDATE webhook_deliveries d SET lease_until = now() + make_interval(secs => $2)
         WHERE d.id IN (SELECT id FROM heads WHERE next_attempt_at <= now() ORDER BY id LIMIT $1)
           AND d.state = 'pending' AND (d.lease_until IS NULL OR d.lease_until < now())
         RETURNING d.id, d.attempts, d.subscription_id, d.seq
       )
       SELECT t.id::text AS id, t.attempts, s.url, s.secret, a.event_id, a.id::text AS seq, a.at,
              a.object_type || '.' || a.action AS type, a.actor_kind, a.actor_id, a.actor_name,
              a.object_type, a.object_id, a.change, a.hash, a.prev_hash
       FROM taken t
       JOIN webhook_subscriptions s ON s.id = t.subscription_id
       JOIN audit_log a ON a.id = t.seq
       ORDER BY t.seq`,
      [limit, leaseSeconds],
    );
  }

  async delivered(manager: EntityManager, id: string): Promise<void> {
    await manager.query(
      `UPDATE webhook_deliveries SET state = 'delivered', delivered_at = now(), lease_until = NULL,
         attempts = attempts + 1, last_error = NULL
       WHERE id = $1`,
      [id],
    );
  }

  /** A failed attempt: due again after `retryInSeconds`, or dead when that is null. */
  async failed(
    manager: EntityManager,
    id: string,
    error: string,
    retryInSeconds: number | null,
  ): Promise<void> {
    await manager.query(
      `UPDATE webhook_deliveries SET attempts = attempts + 1, last_error = left($2, 500),
         lease_until = NULL,
         state = CASE WHEN $3::float8 IS NULL THEN 'dead' ELSE 'pending' END,
         next_attempt_at = now() + make_interval(secs => coalesce($3::float8, 0))
       WHERE id = $1`,
      [id, error, retryInSeconds],
    );
  }

  /** Messages not yet delivered and the age of the oldest: the lag the metrics report. */
  async backlog(manager: EntityManager): Promise<{ pending: number; oldest_seconds: number }> {
    const [row] = await manager.query<{ pending: number; oldest_seconds: number }[]>(
      `SELECT count(*)::int AS pending,
              coalesce(extract(epoch FROM now() - min(a.at)), 0)::float8 AS oldest_seconds
       FROM webhook_deliveries d JOIN audit_log a ON a.id = d.seq WHERE d.state = 'pending'`,
    );
    return row;
  }
}
