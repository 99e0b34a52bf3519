import type { FieldProblem } from '@app/errors';
import { ValidationFailedError } from '@app/errors';
import { parseTimestamp } from '@app/platform';

/** One REMS entitlement as the webhook receives it, after validation. */
export interface Entitlement {
  application: number;
  /** Dataset accession. */
  resource: string;
  /** Identity-provider subject. */
  user: string;
  mail: string | null;
  /** Last day of access (UTC date of REMS's `end`), or null when REMS gave none. */
  endDate: string | null;
  /** REMS's `end` to the millisecond (epoch ms), or null. */
  endTime: number | null;
}

/** Keeps one request well inside REMS's 2.5-second time-out. */
export const MAX_ENTITLEMENTS = 1000;

const INT4_MAX = 2_147_483_647;
const SUBJECT_MAX = 64;
const ACCESSION_MAX = 20;
const EMAIL_MAX = 254;

type Item = Record<string, unknown>;

function utcDateOf(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}

function checkItem(item: Item, index: number, problems: FieldProblem[]): Entitlement | null {
  const before = problems.length;
  const problem = (field: string, message: string) => problems.push({ index, field, message });

  const { application, resource, user, mail, end } = item;
  if (
    typeof application !== 'number' ||
    !Number.isInteger(application) ||
    application < 1 ||
    application > INT4_MAX
  ) {
    problem('application', 'must be a positive integer');
  }
  if (typeof resource !== 'string' || resource.trim() === '' || resource.length > ACCESSION_MAX) {
    problem('resource', `must be a dataset accession (1-${ACCESSION_MAX} characters)`);
  }
  if (typeof user !== 'string' || user.trim() === '' || user.length > SUBJECT_MAX) {
    problem('user', `must be an identity-provider subject (1-${SUBJECT_MAX} characters)`);
  }
  // REMS sends null when the account has no email attribute; anything else must look like one.
  if (mail !== undefined && mail !== null) {
    if (
      typeof mail !== 'string' ||
      mail.length > EMAIL_MAX ||
      !/^[^\s@]+@[^\s@]+$/.test(mail.trim())
    ) {
      problem('mail', 'must be an email address or null');
    }
  }
  let endTime: number | null = null;
  if (end !== undefined && end !== null) {
    // ISO 8601 date-time as REMS writes it (`2026-08-03T23:59:59.000Z`), offset required.
    const parsed = parseTimestamp(end);
    if (parsed === undefined) {
      problem('end', 'must be an ISO 8601 timestamp with offset, or null');
    } else {
      endTime = parsed.getTime();
    }
  }
  if (problems.length > before) return null;
  return {
    application: application as number,
    resource: (resource as string).trim(),
    user: user as string,
    mail: typeof mail === 'string' ? mail.trim() : null,
    endDate: endTime === null ? null : utcDateOf(endTime),
    endTime,
  };
}

/**
 * Validates the whole REMS payload (a JSON array of entitlements) and reports every problem at
 * once, so nothing is written unless all items are usable. Unknown extra fields are ignored:
 * REMS versions add fields over time.
 */
export function parseEntitlements(body: unknown): Entitlement[] {
  if (!Array.isArray(body)) {
    throw new ValidationFailedError(
      [{ field: 'body', message: 'must be a JSON array of entitlements' }],
      'Request body must be a JSON array of entitlements',
    );
  }
  if (body.length > MAX_ENTITLEMENTS) {
    throw new ValidationFailedError([
      { field: 'body', message: `must hold at most ${MAX_ENTITLEMENTS} entitlements` },
    ]);
  }
  const problems: FieldProblem[] = [];
  const items: Entitlement[] = [];
  body.forEach((raw: unknown, index) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      problems.push({ index, message: 'must be an object' });
      return;
    }
    const item = checkItem(raw as Item, index, problems);
    if (item) items.push(item);
  });
  if (problems.length > 0) throw new ValidationFailedError(problems);
  return items;
}

/**
 * The rows of one (application, resource, user) in a delivery, taken as one entitlement.
 * REMS sends every row it holds for that key (CSCfi/rems `get-entitlements`), ended ones
 * included: after a revocation and a re-grant the old row carries its past `end` and the new
 * one `end: null`. Read row by row, the old row would end the new grant.
 */
export interface KeyedEntitlement {
  application: number;
  resource: string;
  user: string;
  mail: string | null;
  /** Index of the key's first row in the delivery (for error messages). */
  index: number;
  /** The latest `end` of the rows, or null when any row is open. */
  endTime: number | null;
  /** `endTime` as a UTC date (the access's last day), or null when open. */
  endDate: string | null;
  /** Every explicit `end` of the rows, for ordering against a recorded revocation. */
  rowEnds: number[];
}

/** Groups a delivery's rows by (application, resource, user), in order of first appearance. */
export function byEntitlementKey(rows: Entitlement[]): KeyedEntitlement[] {
  const keyed = new Map<string, KeyedEntitlement & { open: boolean }>();
  rows.forEach((row, index) => {
    const key = JSON.stringify([row.application, row.resource, row.user]);
    let entry = keyed.get(key);
    if (entry === undefined) {
      entry = {
        application: row.application,
        resource: row.resource,
        user: row.user,
        mail: null,
        index,
        endTime: null,
        endDate: null,
        rowEnds: [],
        open: false,
      };
      keyed.set(key, entry);
    }
    entry.mail ??= row.mail;
    if (row.endTime === null) entry.open = true;
    else entry.rowEnds.push(row.endTime);
  });
  return [...keyed.values()].map(({ open, ...entry }) => {
    const endTime = open || entry.rowEnds.length === 0 ? null : entry.rowEnds.reduce((a, b) => Math.max(a, b));
    return { ...entry, endTime, endDate: endTime === null ? null : utcDateOf(endTime) };
  });
}

/**
 * The latest `end` among a delivery's rows that lie in the past: its history. REMS ends every
 * row of a key at the revocation time (`end-entitlements!` in CSCfi/rems
 * `resources/sql/queries.sql`), so a re-grant made after a revocation carries a row ended
 * exactly then; a delivery built before the revocation has no ended row that late. Rows that
 * end later than now are current grants, not history. `revokedAt` (the latest revocation
 * recorded for the key) also counts as past, so a REMS clock running ahead of ours cannot hide
 * the revocation row. Null when the delivery carries no history.
 */
export function latestHistoryEnd(
  rowEnds: number[],
  now: number,
  revokedAt: number | null,
): number | null {
  const past = Math.max(now, revokedAt ?? now);
  let latest: number | null = null;
  for (const end of rowEnds) if (end <= past && (latest === null || end > latest)) latest = end;
  return latest;
}
