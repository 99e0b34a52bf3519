import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { PersonRecord } from '../identity/person-directory';

export type Outcome = 'created' | 'updated' | 'unchanged';

/** The webhook's key of an access: (application, dataset, requesting subject). */
export interface RequestKey {
  application: number;
  datasetId: number;
  subject: string;
}

export interface GrantInput extends RequestKey {
  holder: PersonRecord;
  /** Requested last day, or null for "default expiry" (used only when (re)starting an access). */
  endDate: string | null;
  defaultExpiry: string;
  today: string;
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
}

/**
 * Writes the accesses the webhook manages. Callers hold the subject's advisory lock, so the
 * read-then-write here is not racing another delivery; the unique key on (application,
 * dataset, request_subject) is the database's guarantee behind that.
 */
@Injectable()
export class RequestAccessesRepository {
  async grant(manager: EntityManager, input: GrantInput): Promise<AccessChange> {
    const existing = await this.find(manager, input);
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

    const active = existing.status === 'active';
    // A repeated request without an end keeps the running expiry (it must not creep forward).
    const expires = input.endDate ?? (active ? existing.grant_expires_on : input.defaultExpiry);
    // A late retry whose end has already passed must not revive a terminated access.
    const revive = !active && (expires === null || expires >= input.today);
    const status = active || revive ? 'active' : existing.status;
    if (
      status === existing.status &&
      expires === existing.grant_expires_on &&
      userId === existing.user_id &&
      contactId === existing.contact_id
    ) {
      return { outcome: 'unchanged', accessId: existing.id };
    }
    const note = revive
      ? `Reactivated by access request #${input.application} on ${input.today}`
      : `Updated by access request #${input.application} on ${input.today}`;
    await manager.query(
      `UPDATE accesses SET status = $2, grant_expires_on = $3, user_id = $4, contact_id = $5,
         access_notes = concat_ws(E'\\n', NULLIF(access_notes, ''), $6::text), updated_at = now()
       WHERE id = $1`,
      [existing.id, status, expires, userId, contactId, note],
    );
    return {
      outcome: 'updated',
      accessId: existing.id,
      before: { status: existing.status, grant_expires_on: existing.grant_expires_on },
      after: { status, grant_expires_on: expires },
    };
  }

  async revoke(manager: EntityManager, key: RequestKey, today: string): Promise<AccessChange> {
    const existing = await this.find(manager, key);
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
