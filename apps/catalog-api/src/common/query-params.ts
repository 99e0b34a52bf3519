import { ValidationFailedError } from '@app/errors';

/** The parsed query string as Express hands it over (strings, arrays or nested objects). */
export type RawQuery = Record<string, unknown>;

function invalid(parameter: string, message: string): ValidationFailedError {
  return new ValidationFailedError([{ parameter, message }]);
}

/** The single string value of a known parameter, or undefined when absent. */
export function readString(query: RawQuery, parameter: string): string | undefined {
  const value = query[parameter];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalid(parameter, 'must be given once, as a plain value');
  return value;
}

export function readPositiveInt(query: RawQuery, parameter: string): number | undefined {
  const value = readString(query, parameter);
  if (value === undefined) return undefined;
  // Postgres integer range: a larger id cannot exist, and would fail the query as a 500.
  if (!/^[1-9][0-9]{0,9}$/.test(value) || Number(value) > 2_147_483_647) {
    throw invalid(parameter, 'must be a positive integer');
  }
  return Number(value);
}

export function readBoolean(query: RawQuery, parameter: string): boolean | undefined {
  const value = readString(query, parameter);
  if (value === undefined) return undefined;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw invalid(parameter, 'must be true or false');
}

export function readNonEmptyString(
  query: RawQuery,
  parameter: string,
  maxLength: number,
): string | undefined {
  const value = readString(query, parameter);
  if (value === undefined) return undefined;
  if (value.length === 0 || value.length > maxLength) {
    throw invalid(parameter, `must be 1 to ${maxLength} characters long`);
  }
  return value;
}

/**
 * A comma-separated subset of `allowed`, returned in the order given and without duplicates.
 * An empty list or an unknown name is a 400 naming the offending values.
 */
export function readFieldList<T extends string>(
  query: RawQuery,
  parameter: string,
  allowed: readonly T[],
): T[] | undefined {
  const value = readString(query, parameter);
  if (value === undefined) return undefined;
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
  const unknown = names.filter((name) => !(allowed as readonly string[]).includes(name));
  if (names.length === 0 || unknown.length > 0) {
    const detail = unknown.length > 0 ? `unknown field(s) ${unknown.join(', ')}; ` : '';
    throw invalid(parameter, `${detail}must be a comma-separated list of: ${allowed.join(', ')}`);
  }
  return [...new Set(names)] as T[];
}

export const UUID_PATTERN =
  /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export function readUuid(query: RawQuery, parameter: string): string | undefined {
  const value = readString(query, parameter);
  if (value === undefined) return undefined;
  if (!UUID_PATTERN.test(value)) throw invalid(parameter, 'must be a UUID');
  return value;
}

/** What an exact filter's value must be: a record id, a UUID, or text no longer than its column. */
export type ExactFilterValue =
  { type: 'id' } | { type: 'uuid' } | { type: 'text'; maxLength: number };

/**
 * An exact-match filter of a list endpoint (DAISY's `get_filtered_entities`). `names` are the
 * query parameters that select it: DAISY's model attribute, then the record's key where the
 * two differ (`elu_accession` and `external_id`).
 */
export interface ExactFilter {
  names: readonly string[];
  /** The SQL expression compared with `=` (see exact-filters.sql.ts). */
  column: string;
  value: ExactFilterValue;
  /** What it matches, for the API docs. */
  description: string;
}

/** The values of the exact filters present in the query, by parameter name, each validated. */
export function readExactFilters(
  query: RawQuery,
  filters: readonly ExactFilter[],
): Record<string, string | number> {
  const values: Record<string, string | number> = {};
  for (const filter of filters) {
    for (const name of filter.names) {
      const value =
        filter.value.type === 'id'
          ? readPositiveInt(query, name)
          : filter.value.type === 'uuid'
            ? readUuid(query, name)
            : readNonEmptyString(query, name, filter.value.maxLength);
      if (value !== undefined) values[name] = value;
    }
  }
  return values;
}
