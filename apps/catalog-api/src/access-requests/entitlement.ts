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
}

/** Keeps one request well inside REMS's 2.5-second time-out. */
export const MAX_ENTITLEMENTS = 1000;

const INT4_MAX = 2_147_483_647;
const SUBJECT_MAX = 64;
const ACCESSION_MAX = 20;
const EMAIL_MAX = 254;

type Item = Record<string, unknown>;

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
  let endDate: string | null = null;
  if (end !== undefined && end !== null) {
    // ISO 8601 date-time as REMS writes it (`2026-08-03T23:59:59.000Z`), offset required.
    const parsed = parseTimestamp(end);
    if (parsed === undefined) {
      problem('end', 'must be an ISO 8601 timestamp with offset, or null');
    } else {
      endDate = parsed.toISOString().slice(0, 10);
    }
  }
  if (problems.length > before) return null;
  return {
    application: application as number,
    resource: (resource as string).trim(),
    user: user as string,
    mail: typeof mail === 'string' ? mail.trim() : null,
    endDate,
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
