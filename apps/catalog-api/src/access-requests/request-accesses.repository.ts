import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { PersonRecord } from '../people/person-directory';
import { isCurrentAccess } from '../accesses/usable-access';
import { latestHistoryEnd } from './entitlement';

export type Outcome = 'created' | 'updated' | 'unchanged';

/** The webhook's key of an access: (application, dataset, requesting subject). */
export interface RequestKey {
  application: number;
  datasetId: number;
  subject: string;
}

/** One entitlement to grant; the keys of one call are distinct. */
export interface GrantInput extends RequestKey {
  holder: PersonRecord;
  /** The entitlement's last day (the latest `end` of its rows), or null when it is open. */
  endDate: string | null;
  /** Every explicit `end` of the entitlement's rows (epoch ms), ended ones included. */
  rowEnds: number[];
}

/** What a whole delivery shares. */
export interface GrantContext {
  /** Open grants start with this expiry (today + ACCESS_DEFAULT_EXPIRATION_DAYS). */
  defaultExpiry: string;
  today: string;
  /** Epoch ms of the request, for telling history rows from current ones. */
  now: number;
  createdById: number;
}

/** One entitlement to revoke; the keys of one call are distinct. */
export interface RevokeInput extends RequestKey {
  /** REMS's revocation time (epoch ms). */
  revokedAt: number;
}

interface AccessRow {
  id: number;
  status: string;
  grant_expires_on: string | null;
  user_id: number | null;
  contact_id: number | null;
}

/** What changed, for the audit trail. */
export interface AccessChange {
  outcome: Outcome;
  accessId: number | null;
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
  /** The delivery was built before a revocation already applied, so it was ignored. */
  stale?: true;
}

const keyOf = (key: RequestKey) => JSON.stringify([key.application, key.datasetId, key.subject]);

/**
 * The expiry a grant leaves on an access, or undefined when the grant changes nothing.
 * A running access keeps its expiry on an open grant (a retried delivery must not push it
 * forward every day) and takes a current end (a new `end` updates it, spec §4); an end that
 * has already passed is history and never shortens or ends anything. An access that is not
 * running restarts only for a current grant.
 */
function expiryAfterGrant(
  row: AccessRow,
  input: GrantInput,
  context: GrantContext,
): string | null | undefined {
  const current = input.endDate === null || input.endDate >= context.today;
  if (isCurrentAccess(row, context.today)) {
    return input.endDate !== null && current ? input.endDate : row.grant_expires_on;
  }
  return current ? (input.endDate ?? context.defaultExpiry) : undefined;
}

/** The keys as the parallel arrays the set-based statements below unnest. */
function keyArrays(keys: RequestKey[]): [number[], number[], string[]] {
  return [keys.map((k) => k.application), keys.map((k) => k.datasetId), keys.map((k) => k.subject)];
}

/**
 * Writes the accesses the webhook manages, a whole delivery in a fixed number of statements
 * (a delivery holds up to 1,000 entitlements and REMS waits 2.5 s). Callers hold the subjects'
 * advisory locks, so the read-then-write here is not racing another delivery; the unique key
 * on (application, dataset, request_subject) is the database's guarantee behind that.
 *
 * REMS retries each delivery on its own schedule (CSCfi/rems `src/clj/rems/db/outbox.clj`),
 * so a grant and its revocation can arrive in either order. The latest revocation known for
 * each key is kept (`access_request_revocations`): from a revocation, or from the history a
 * re-grant carries (`latestHistoryEnd`). A grant built before it, or a revocation no later
 * than it, changes nothing.
 */
@Injectable()
export class RequestAccessesRepository {
  async grantAll(
    manager: EntityManager,
    inputs: GrantInput[],
    context: GrantContext,
  ): Promise<AccessChange[]> {
    const existing = await this.findAll(manager, inputs);
    const revocations = await this.revocationsOf(manager, inputs);
    const changes: AccessChange[] = [];
    const creates: { input: GrantInput; expires: string; at: number }[] = [];
    const updates: { id: number; expires: string | null; input: GrantInput; note: string }[] = [];
    const history: RevokeInput[] = [];
    for (const input of inputs) {
      const row = existing.get(keyOf(input));
      const revokedAt = revocations.get(keyOf(input)) ?? null;
      const latest = latestHistoryEnd(input.rowEnds, context.now, revokedAt);
      if (revokedAt !== null && (latest === null || latest < revokedAt)) {
        changes.push({ outcome: 'unchanged', accessId: row?.id ?? null, stale: true });
        continue;
      }
      // The revocation this re-grant followed is now accounted for, even if its own delivery
      // is still on its way: when it arrives it is older than this grant.
      if (latest !== null && (revokedAt === null || latest > revokedAt)) {
        history.push({ ...input, revokedAt: latest });
      }
      if (row === undefined) {
        const expires = input.endDate ?? context.defaultExpiry;
        creates.push({ input, expires, at: changes.length });
        changes.push({
          outcome: 'created',
          accessId: null,
          after: { status: 'active', grant_expires_on: expires },
        });
        continue;
      }
      const expires = expiryAfterGrant(row, input, context);
      const { userId, contactId } = holderColumns(input.holder);
      if (
        expires === undefined ||
        (row.status === 'active' &&
          expires === row.grant_expires_on &&
          userId === row.user_id &&
          contactId === row.contact_id)
      ) {
        changes.push({ outcome: 'unchanged', accessId: row.id });
        continue;
      }
      const verb = isCurrentAccess(row, context.today) ? 'Updated' : 'Reactivated';
      updates.push({
        id: row.id,
        expires,
        input,
        note: `${verb} by access request #${input.application} on ${context.today}`,
      });
      changes.push({
        outcome: 'updated',
        accessId: row.id,
        before: { status: row.status, grant_expires_on: row.grant_expires_on },
        after: { status: 'active', grant_expires_on: expires },
      });
    }
    const ids = await this.insertAll(manager, creates, context);
    creates.forEach((create, n) => (changes[create.at].accessId = ids[n]));
    await this.reactivateAll(manager, updates);
    await this.recordRevocations(manager, history);
    return changes;
  }

  /**
   * Terminates the keys' accesses and records the revocations (also where no access exists
   * yet). A revocation no later than the recorded one is a retry or out of date, and changes
   * nothing.
   */
  async revokeAll(
    manager: EntityManager,
    inputs: RevokeInput[],
    today: string,
  ): Promise<AccessChange[]> {
    const existing = await this.findAll(manager, inputs);
    const revocations = await this.revocationsOf(manager, inputs);
    const changes: AccessChange[] = [];
    const recorded: RevokeInput[] = [];
    const terminated: { id: number; note: string }[] = [];
    for (const input of inputs) {
      const row = existing.get(keyOf(input));
      const previous = revocations.get(keyOf(input));
      if (previous !== undefined && input.revokedAt <= previous) {
        // A repeat of the applied revocation on a terminated access is a plain retry; anything
        // else (an older one, or one a re-grant has since overtaken) is out of date.
        const retry = input.revokedAt === previous && row?.status === 'terminated';
        changes.push({
          outcome: 'unchanged',
          accessId: row?.id ?? null,
          ...(retry ? {} : { stale: true }),
        });
        continue;
      }
      recorded.push(input);
      if (row === undefined || row.status === 'terminated') {
        changes.push({ outcome: 'unchanged', accessId: row?.id ?? null });
        continue;
      }
      terminated.push({
        id: row.id,
        note: `Revoked by access request #${input.application} on ${today}`,
      });
      changes.push({
        outcome: 'updated',
        accessId: row.id,
        before: { status: row.status },
        after: { status: 'terminated' },
      });
    }
    await this.recordRevocations(manager, recorded);
    if (terminated.length > 0) {
      await manager.query(
        `UPDATE accesses a SET status = 'terminated',
           access_notes = concat_ws(E'\\n', NULLIF(a.access_notes, ''), v.note), updated_at = now()
         FROM unnest($1::int[], $2::text[]) AS v(id, note) WHERE a.id = v.id`,
        [terminated.map((t) => t.id), terminated.map((t) => t.note)],
      );
    }
    return changes;
  }

  /** The keys' accesses, locked for this transaction. */
  private findAll(manager: EntityManager, keys: RequestKey[]): Promise<Map<string, AccessRow>> {
    return this.lockedByKey<AccessRow>(
      manager,
      'accesses',
      `t.id, t.status, t.grant_expires_on::text AS grant_expires_on, t.user_id, t.contact_id`,
      keys,
    );
  }

  /** The keys' recorded revocation times (epoch ms), locked for this transaction. */
  private async revocationsOf(
    manager: EntityManager,
    keys: RequestKey[],
  ): Promise<Map<string, number>> {
    const rows = await this.lockedByKey<{ revoked_at: Date }>(
      manager,
      'access_request_revocations',
      't.revoked_at',
      keys,
    );
    return new Map([...rows].map(([key, row]) => [key, row.revoked_at.getTime()]));
  }

  /** The rows of a table keyed like accesses, for these keys, by key, locked. */
  private async lockedByKey<T>(
    manager: EntityManager,
    table: 'accesses' | 'access_request_revocations',
    columns: string,
    keys: RequestKey[],
  ): Promise<Map<string, T>> {
    const rows = await manager.query<
      (T & { application_id: number; dataset_id: number; request_subject: string })[]
    >(
      `SELECT ${columns}, t.application_id, t.dataset_id, t.request_subject
       FROM ${table} t
       JOIN unnest($1::int[], $2::int[], $3::text[]) AS k(application_id, dataset_id, request_subject)
         ON t.application_id = k.application_id AND t.dataset_id = k.dataset_id
        AND t.request_subject = k.request_subject
       FOR UPDATE OF t`,
      keyArrays(keys),
    );
    const byKey = new Map<string, T>();
    for (const row of rows) {
      byKey.set(
        keyOf({
          application: row.application_id,
          datasetId: row.dataset_id,
          subject: row.request_subject,
        }),
        row,
      );
    }
    return byKey;
  }

  /** Inserts the new accesses; their ids, in the order given. */
  private async insertAll(
    manager: EntityManager,
    creates: { input: GrantInput; expires: string }[],
    context: GrantContext,
  ): Promise<number[]> {
    if (creates.length === 0) return [];
    const inputs = creates.map((c) => c.input);
    const holders = inputs.map((input) => holderColumns(input.holder));
    const rows = await manager.query<{ id: number; ord: string }[]>(
      `WITH v AS (
         SELECT * FROM unnest($1::int[], $2::int[], $3::int[], $4::date[], $5::int[], $6::text[])
           WITH ORDINALITY AS v(dataset_id, user_id, contact_id, expires, application_id, subject, ord)
       ), inserted AS (
         INSERT INTO accesses (dataset_id, user_id, contact_id, status, granted_on, grant_expires_on,
           access_notes, created_by_id, was_generated_automatically, application_id, request_subject)
         SELECT dataset_id, user_id, contact_id, 'active', $7::date, expires,
           'Granted automatically by access request #' || application_id, $8, true, application_id, subject
         FROM v ORDER BY ord
         RETURNING id, application_id, dataset_id, request_subject
       )
       SELECT i.id, v.ord FROM inserted i JOIN v
         ON v.application_id = i.application_id AND v.dataset_id = i.dataset_id AND v.subject = i.request_subject
       ORDER BY v.ord`,
      [
        inputs.map((i) => i.datasetId),
        holders.map((h) => h.userId),
        holders.map((h) => h.contactId),
        creates.map((c) => c.expires),
        inputs.map((i) => i.application),
        inputs.map((i) => i.subject),
        context.today,
        context.createdById,
      ],
    );
    return rows.map((row) => row.id);
  }

  /** Brings existing accesses back to active with their new expiry and holder, noting why. */
  private async reactivateAll(
    manager: EntityManager,
    updates: { id: number; expires: string | null; input: GrantInput; note: string }[],
  ): Promise<void> {
    if (updates.length === 0) return;
    const holders = updates.map((u) => holderColumns(u.input.holder));
    await manager.query(
      `UPDATE accesses a SET status = 'active', grant_expires_on = v.expires, user_id = v.user_id,
         contact_id = v.contact_id,
         access_notes = concat_ws(E'\\n', NULLIF(a.access_notes, ''), v.note), updated_at = now()
       FROM unnest($1::int[], $2::date[], $3::int[], $4::int[], $5::text[])
         AS v(id, expires, user_id, contact_id, note)
       WHERE a.id = v.id`,
      [
        updates.map((u) => u.id),
        updates.map((u) => u.expires),
        holders.map((h) => h.userId),
        holders.map((h) => h.contactId),
        updates.map((u) => u.note),
      ],
    );
  }

  private async recordRevocations(
    manager: EntityManager,
    revocations: RevokeInput[],
  ): Promise<void> {
    if (revocations.length === 0) return;
    await manager.query(
      `INSERT INTO access_request_revocations (application_id, dataset_id, request_subject, revoked_at)
       SELECT * FROM unnest($1::int[], $2::int[], $3::text[], $4::timestamptz[])
       ON CONFLICT (application_id, dataset_id, request_subject)
       DO UPDATE SET revoked_at = EXCLUDED.revoked_at`,
      [...keyArrays(revocations), revocations.map((r) => new Date(r.revokedAt).toISOString())],
    );
  }
}

function holderColumns(holder: PersonRecord): { userId: number | null; contactId: number | null } {
  return {
    userId: holder.kind === 'user' ? holder.id : null,
    contactId: holder.kind === 'contact' ? holder.id : null,
  };
}
