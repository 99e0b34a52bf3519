import type { AppError } from './app-error';
import { BadRequestError, ConflictError } from './http-errors';

/**
 * SQLSTATEs (class 22, data exception) that only a value sent by the client can cause: text with
 * a NUL character (Postgres cannot store U+0000), a value longer than its column, a number out of
 * range, a malformed uuid, integer or date. Validation should stop these first; when one slips
 * through, the client still gets a 400 instead of a 500.
 */
const INPUT_ERRORS: Record<string, string> = {
  '22021': 'Text must not contain NUL characters',
  '22P05': 'Text contains a character the database cannot store',
  '22001': 'A value is longer than its field allows',
  '22003': 'A number is out of range',
  '22P02': 'A value does not have the form its field requires',
  '22007': 'A date or time value is malformed',
  '22008': 'A date or time value is out of range',
};

function sqlStateOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  // TypeORM's QueryFailedError copies the driver's fields; the driver error is also kept.
  const { code, driverError } = error as { code?: unknown; driverError?: { code?: unknown } };
  if (typeof code === 'string') return code;
  return typeof driverError?.code === 'string' ? driverError.code : undefined;
}

/** A 400 for a database error caused by the client's value, or undefined for anything else. */
export function fromDatabaseInputError(error: unknown): AppError | undefined {
  const code = sqlStateOf(error);
  const description = code === undefined ? undefined : INPUT_ERRORS[code];
  return description === undefined ? undefined : new BadRequestError(description);
}

/** unique_violation; serialization_failure and deadlock_detected: concurrent writes collided. */
const UNIQUE_VIOLATION = '23505';
const RACES = new Set(['40001', '40P01']);

/** The columns a unique violation names in its detail (`Key (a, b)=(…)`), values left out. */
function conflictingColumns(error: unknown): string[] {
  const { detail, driverError } = error as { detail?: unknown; driverError?: { detail?: unknown } };
  const text = typeof detail === 'string' ? detail : driverError?.detail;
  const match = typeof text === 'string' ? /^Key \(([^)]*)\)=/.exec(text) : null;
  return match === null ? [] : match[1].split(',').map((column) => column.trim());
}

/**
 * A 409 for a write that collided with another: a unique constraint violated (two concurrent
 * creations of one user pass their "is it free?" checks together, and the second INSERT fails),
 * or a transaction PostgreSQL aborted for a deadlock or a serialization failure. The client
 * retries or reads what is there; no route answers such a race with 500.
 */
export function fromDatabaseConflict(error: unknown): AppError | undefined {
  const code = sqlStateOf(error);
  if (code === UNIQUE_VIOLATION) {
    const columns = conflictingColumns(error);
    return new ConflictError(
      'Conflicts with an existing record (a concurrent change, or a value already taken)',
      columns.length === 1 ? { field: columns[0] } : columns.length > 1 ? { fields: columns } : {},
    );
  }
  if (code !== undefined && RACES.has(code))
    return new ConflictError('A concurrent change conflicts with this request; retry it');
  return undefined;
}
