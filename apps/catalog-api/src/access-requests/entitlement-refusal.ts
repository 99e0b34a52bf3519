import type { FieldProblem } from '@app/errors';
import { ValidationFailedError } from '@app/errors';

/**
 * Why the webhook refused a delivery. REMS retries every answer but 200 for a day, so each of
 * these reaches the operator (metric and log line) instead of only REMS's outbox table.
 */
export const REFUSAL_REASONS = [
  /** The body or an item is malformed (not REMS's shape). */
  'invalid_request',
  /** An accession names no dataset of the catalog (not imported yet, or a typo in REMS). */
  'unknown_dataset',
  /** The identity provider has no account with that subject. */
  'unknown_account',
  /** The identity provider has not verified the account's email (DAISY refuses these too). */
  'unverified_email',
  /** Two catalog records share the requester's email: an operator must merge them. */
  'ambiguous_person',
  /** ACCESSREQ_INTEGRATION_ENABLED is off. */
  'integration_disabled',
  /** The caller's address is not on ACCESSREQ_ALLOWED_IP_ADDRESSES. */
  'caller_not_allowed',
  /** A REMS event notification (HTTP PUT) sent to the entitlement webhook. */
  'event_notification',
] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** One refused item, with the reason it counts under. */
export interface RefusedItem extends FieldProblem {
  reason: RefusalReason;
}

/**
 * A delivery refused for reasons found after parsing (unknown dataset, account, unverified
 * email, ambiguous person). The envelope is the usual 400 with `more.errors`; the reasons are
 * kept for the metric and the log line.
 */
export class EntitlementsRefusedError extends ValidationFailedError {
  constructor(
    readonly refused: RefusedItem[],
    description?: string,
  ) {
    super(
      refused.map(({ reason: _reason, ...problem }) => problem),
      description,
    );
  }
}
