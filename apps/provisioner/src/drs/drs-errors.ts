import { AppError } from '@app/errors';

/**
 * A DRS refusal: the envelope every error carries, with the DRS 1.5 `Error` members (`msg`,
 * `status_code`) beside it, so DRS clients and the house's clients both read it.
 */
export class DrsError extends AppError {
  constructor(status: number, code: string, msg: string, more: Record<string, unknown> = {}) {
    super(status, code, msg, { reason: code, ...more });
  }
}

export const drsUnauthorized = (code: string, msg: string, more?: Record<string, unknown>) =>
  new DrsError(401, code, msg, more);
export const drsForbidden = (msg: string, more?: Record<string, unknown>) =>
  new DrsError(403, 'not_granted', msg, more);
export const drsNotFound = (what = 'No DRS object with this id') =>
  new DrsError(404, 'not_found', what);
export const drsUnavailable = (msg: string) => new DrsError(503, 'unavailable', msg);
