import type { ExactFilter } from './query-params';
import { SqlParams } from './sql-params';

/**
 * The SQL conditions of the exact filters read by `readExactFilters`: one `column = $n` per
 * parameter given, to be ANDed with the route's other conditions (visibility first). Exact
 * means exact, as in DAISY: case and whitespace count.
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
