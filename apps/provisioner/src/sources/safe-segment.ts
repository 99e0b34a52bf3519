/**
 * Identifiers that end up as path segments in storage (submission refs, dataset ids,
 * project names) must be one safe segment: the pattern of the contract, never `.` or `..`.
 */
export const SAFE_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function isSafeSegment(value: unknown): value is string {
  return typeof value === 'string' && SAFE_SEGMENT.test(value) && value !== '.' && value !== '..';
}
