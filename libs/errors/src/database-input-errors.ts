import type { AppError } from './app-error';
import { BadRequestError } from './http-errors';

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
