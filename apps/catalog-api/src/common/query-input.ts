import type { Type } from '@nestjs/common';
import { PositiveIntParam, TextParam, UuidParam } from '@app/platform';
import type { ExactFilter } from './exact-filters.sql';

/** The catalog's own query parameters; the generic ones are in @app/platform (input/). */

function ExactFilterParam(filter: ExactFilter): PropertyDecorator {
  const description =
    `Only the records whose ${filter.description} is exactly this ` +
    `(${filter.names.map((n) => `\`${n}\``).join(' or ')}); an invalid value is a 400`;
  const { value } = filter;
  if (value.type === 'id') return PositiveIntParam(description);
  if (value.type === 'uuid') return UuidParam(description);
  return TextParam(description, value.maxLength);
}

/**
 * The base class of a list route's query DTO: one optional parameter per name of each exact
 * filter (DAISY's `get_filtered_entities`), declared from the same list the repository's SQL
 * reads, so the two cannot drift apart.
 */
export function ExactFiltersQuery(filters: readonly ExactFilter[]): Type<object> {
  class ExactFilters {}
  for (const filter of filters) {
    for (const name of filter.names) ExactFilterParam(filter)(ExactFilters.prototype, name);
  }
  return ExactFilters;
}

/** The exact filters given in a validated query, by parameter name. */
export function exactValues(
  query: object,
  filters: readonly ExactFilter[],
): Record<string, string | number> {
  const given = query as Record<string, string | number | undefined>;
  const values: Record<string, string | number> = {};
  for (const name of filters.flatMap((filter) => filter.names)) {
    const value = given[name];
    if (value !== undefined) values[name] = value;
  }
  return values;
}

/** `?project_id=`: shared by the project, dataset and contract lists. */
export const ProjectIdParam = () =>
  PositiveIntParam("Only the project's records (its database id); else 400");
