import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { PersonRecord } from '../identity/person-directory';
import { latestHistoryEnd } from './entitlement';

export type Outcome = 'created' | 'updated' | 'unchanged';

/** The webhook's key of an access: (application, dataset, requesting subject). */
export interface RequestKey {
  application: number;
  datasetId: number;
  subject: string;
}

export interface GrantInput extends RequestKey {
  holder: PersonRecord;
  /** The entitlement's last day (the latest `end` of its rows), or null when it is open. */
  endDate: string | null;
  /** Every explicit `end` of the entitlement's rows (epoch ms), ended ones included. */
  rowEnds: number[];
  /** Open grants start with this expiry (today + ACCESS_DEFAULT_EXPIRATION_DAYS). */
  defaultExpiry: string;
  today: string;
  /** Epoch ms of the request, for telling history rows from current ones. */
  now: number;
  createdById: number;
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

/** An access that gives access today: active and not past its last day. */
function running(row: AccessRow, today: string): boolean {
  return (
    row.status === 'active' && (row.grant_expires_on === null || row.grant_expires_on >= today)
  );
}

/**
 * The expiry a grant leaves on an access, or undefined when the grant changes nothing.
 * A running access keeps its expiry on an open grant (a retried delivery must not push it
 * forward every day) and takes a current end (a new `end` updates it, spec §4); an end that
 * has already passed is history and never shortens or ends anything. An access that is not
 * running restarts only for a current grant.
 */
function expiryAfterGrant(row: AccessRow, input: GrantInput): string | null | undefined {
  const current = input.endDate === null || input.endDate >= input.today;
  if (running(row, input.today)) {
    return input.endDate !== null && current ? input.endDate : row.grant_expires_on;
  }
  return current ? (input.endDate ?? input.defaultExpiry) : undefined;
}

/**
 * Writes the accesses the webhook manages. Callers hold the subject's advisory lock, so the
 * read-then-write here is not racing another delivery; the unique key on (application,
 * dataset, request_subject) is the database's guarantee behind that.
 *
 * REMS retries each delivery on its own schedule (CSCfi/rems `src/clj/rems/db/outbox.clj`),
 * so a grant and its revocation can arrive in either order. The latest revocation known for
 * each key is kept (`access_request_revocations`): from a revocation, or from the history a
 * re-grant carries (`latestHistoryEnd`). A grant built before it, or a revocation no later
 * than it, changes nothing.
 */
@Injectable()
export class RequestAccessesRepository {
  async grant(manager: EntityManager, input: GrantInput): Promise<AccessChange> {
    const existing = await this.find(manager, input);
    const revokedAt = await this.revokedAt(manager, input);
    const history = latestHistoryEnd(input.rowEnds, input.now, revokedAt);
    if (revokedAt !== null && (history === null || history < revokedAt)) {
      return { outcome: 'unchanged', accessId: existing?.id ?? null, stale: true };
    }
    // The revocation this re-grant followed is now accounted for, even if its own delivery
    // is still on its way: when it arrives it is older than this grant.
    if (history !== null && (revokedAt === null || history > revokedAt)) {
      await this.recordRevocation(manager, input, history);
    }
    const userId = input.holder.kind === 'user' ? input.holder.id : null;
    const contactId = input.holder.kind === 'contact' ? input.holder.id : null;
    if (existing === undefined) {
      const expires = input.endDate ?? input.defaultExpiry;
      const rows = await manager.query<{ id: number }[]>(
        `INSERT INTO accesses (dataset_id, user_id, contact_id, status, granted_on, grant_expires_on,
           access_notes, created_by_id, was_generated_automatically, application_id, request_subject)
         VALUES ($1, $2, $3, 'active', $4, $5, $6, $7, true, $8, $9) RETURNING id`,
        [
          input.datasetId,
          userId,
          contactId,
          input.today,
          expires,
          `Granted automatically by access request #${input.application}`,
          input.createdById,
          input.application,
          input.subject,
        ],
      );
      return {
        outcome: 'created',
        accessId: rows[0].id,
        after: { status: 'active', grant_expires_on: expires },
      };
    }

    const expires = expiryAfterGrant(existing, input);
    if (
      expires === undefined ||
      (existing.status === 'active' &&
        expires === existing.grant_expires_on &&
        userId === existing.user_id &&
        contactId === existing.contact_id)
    ) {
      return { outcome: 'unchanged', accessId: existing.id };
    }
    const note = running(existing, input.today)
      ? `Updated by access request #${input.application} on ${input.today}`
      : `Reactivated by access request #${input.application} on ${input.today}`;
    await manager.query(
      `UPDATE accesses SET status = 'active', grant_expires_on = $2, user_id = $3, contact_id = $4,
         access_notes = concat_ws(E'\\n', NULLIF(access_notes, ''), $5::text), updated_at = now()
       WHERE id = $1`,
      [existing.id, expires, userId, contactId, note],
    );
    return {
      outcome: 'updated',
      accessId: existing.id,
      before: { status: existing.status, grant_expires_on: existing.grant_expires_on },
      after: { status: 'active', grant_expires_on: expires },
    };
  }

  /**
   * Terminates the key's access and records the revocation (also when no access exists yet).
   * `revokedAt` is REMS's `end`: a revocation no later than the recorded one is a retry or
   * out of date, and changes nothing.
   */
  async revoke(
    manager: EntityManager,
    key: RequestKey,
    revokedAt: number,
    today: string,
  ): Promise<AccessChange> {
    const existing = await this.find(manager, key);
    const recorded = await this.revokedAt(manager, key);
    if (recorded !== null && revokedAt <= recorded) {
      return {
        outcome: 'unchanged',
        accessId: existing?.id ?? null,
        ...(revokedAt < recorded || existing?.status !== 'terminated' ? { stale: true } : {}),
      };
    }
    await this.recordRevocation(manager, key, revokedAt);
    if (existing === undefined || existing.status === 'terminated') {
      return { outcome: 'unchanged', accessId: existing?.id ?? null };
    }
    await manager.query(
      `UPDATE accesses SET status = 'terminated',
         access_notes = concat_ws(E'\\n', NULLIF(access_notes, ''), $2::text), updated_at = now()
       WHERE id = $1`,
      [existing.id, `Revoked by access request #${key.application} on ${today}`],
    );
    return {
      outcome: 'updated',
      accessId: existing.id,
      before: { status: existing.status },
      after: { status: 'terminated' },
    };
  }

  private async recordRevocation(
    manager: EntityManager,
    key: RequestKey,
    revokedAt: number,
  ): Promise<void> {
    await manager.query(
      `INSERT INTO access_request_revocations (application_id, dataset_id, request_subject, revoked_at)
       VALUES ($1, $2, $3, $4::timestamptz)
       ON CONFLICT (application_id, dataset_id, request_subject) DO UPDATE SET revoked_at = EXCLUDED.revoked_at`,
      [key.application, key.datasetId, key.subject, new Date(revokedAt).toISOString()],
    );
  }

  /** The recorded revocation time of the key (epoch ms), locked for this transaction. */
  private async revokedAt(manager: EntityManager, key: RequestKey): Promise<number | null> {
    const rows = await manager.query<{ revoked_at: Date }[]>(
      `SELECT revoked_at FROM access_request_revocations
       WHERE application_id = $1 AND dataset_id = $2 AND request_subject = $3 FOR UPDATE`,
      [key.application, key.datasetId, key.subject],
    );
    return rows.length === 0 ? null : rows[0].revoked_at.getTime();
  }

  private async find(manager: EntityManager, key: RequestKey): Promise<AccessRow | undefined> {
    const rows = await manager.query<AccessRow[]>(
      `SELECT id, status, grant_expires_on::text AS grant_expires_on, user_id, contact_id
       FROM accesses WHERE application_id = $1 AND dataset_id = $2 AND request_subject = $3
       FOR UPDATE`,
      [key.application, key.datasetId, key.subject],
    );
    return rows[0];
  }
}
