import { SqlParams } from './sql-params';

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
  /** The SQL expression compared with `=`. */
  column: string;
  value: ExactFilterValue;
  /** What it matches, for the API docs. */
  description: string;
}

/**
 * The SQL conditions of the exact filters of a list route's query (`ExactFiltersQuery`): one `column = $n` per
 * parameter given, to be ANDed with the route's other conditions (visibility first). Exact
 * means exact, as in DAISY: case and whitespace count. A fragment builder shared by the list
 * repositories (each declares its filters' columns), so it runs no query itself.
 */
export function exactFilterConditions(
  filters: readonly ExactFilter[],
  values: Record<string, string | number>,
  params: SqlParams,
): string[] {
  return filters.flatMap((filter) =>
    filter.names
      .filter((name) => values[name] !== undefined)
      .map((name) => `${filter.column} = ${params.add(values[name])}`),
  );
}

/** The database id: DAISY's `id`, the record's `id_at_source`. */
export const idFilter = (column: string): ExactFilter => ({
  names: ['id', 'id_at_source'],
  column,
  value: { type: 'id' },
  description: 'database id',
});

/** The accession: DAISY's `elu_accession`, the record's `external_id`. */
export const accessionFilter = (column: string): ExactFilter => ({
  names: ['elu_accession', 'external_id'],
  column,
  value: { type: 'text', maxLength: 20 },
  description: 'accession',
});

/** A text column, `maxLength` its length (a longer value cannot match: 400). */
export const textFilter = (
  names: readonly string[],
  column: string,
  maxLength: number,
): ExactFilter => ({ names, column, value: { type: 'text', maxLength }, description: names[0] });
