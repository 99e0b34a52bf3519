import { textOrNull } from '../common/formatting';

/** The `cohorts` columns that identify and describe a cohort. */
export interface CohortSummaryRow {
  id: number;
  elu_accession: string | null;
  name: string;
  description: string | null;
  url: string | null;
}

/**
 * The fields every cohort form starts with: the published export and the publishing answer
 * describe a cohort the same way, so both build it here.
 */
export function toCohortSummary(row: CohortSummaryRow, source: string) {
  return {
    source,
    id_at_source: String(row.id),
    external_id: row.elu_accession,
    name: row.name,
    description: textOrNull(row.description),
    url: textOrNull(row.url),
  };
}
