import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  accessionFilter,
  exactFilterConditions,
  idFilter,
  textFilter,
} from '../common/exact-filters.sql';
import { groupBy, textOrNull } from '../common/formatting';
import type { ExactFilter } from '../common/query-params';
import { SqlParams } from '../common/sql-params';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import {
  FULL_CONTACT_COLUMNS,
  FullContactRow,
  toContactExport,
} from '../contacts/contact.exporter';
import { CohortSummaryRow, toCohortSummary } from './cohort.exporter';

interface CohortRow extends CohortSummaryRow {
  has_ethics_approval: boolean;
  ethics_approval_notes: string | null;
  metadata: string;
}

type OwnerRow = FullContactRow & { cohort_id: number };

/** The exact filters of `GET /api/cohorts` (DAISY's cohort attributes, then record keys). */
export const COHORT_FILTERS: readonly ExactFilter[] = [
  idFilter('id'),
  accessionFilter('elu_accession'),
  textFilter(['title', 'name'], 'name', 255),
];

@Injectable()
export class CohortsService {
  constructor(@Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings) {}

  /** Published cohorts by name, narrowed by COHORT_FILTERS; three queries whatever their number. */
  async listPublished(manager: EntityManager, exact: Record<string, string | number>) {
    const params = new SqlParams();
    const conditions = ['is_published', ...exactFilterConditions(COHORT_FILTERS, exact, params)];
    const cohorts = await manager.query<CohortRow[]>(
      `SELECT id, elu_accession, name, description, url, has_ethics_approval,
         ethics_approval_notes, metadata
       FROM cohorts WHERE ${conditions.join(' AND ')} ORDER BY name, id`,
      params.values,
    );
    const ids = cohorts.map((cohort) => cohort.id);
    const owners = await manager.query<OwnerRow[]>(
      `SELECT co.cohort_id, ${FULL_CONTACT_COLUMNS}
       FROM cohort_owners co JOIN contacts ct ON ct.id = co.contact_id
       WHERE co.cohort_id = ANY($1::int[]) ORDER BY ct.last_name, ct.first_name, ct.id`,
      [ids],
    );
    const institutes = await manager.query<{ cohort_id: number; partner_id: number }[]>(
      `SELECT cohort_id, partner_id FROM cohort_institutes
       WHERE cohort_id = ANY($1::int[]) ORDER BY partner_id`,
      [ids],
    );
    const ownersOf = groupBy(owners, (row) => row.cohort_id);
    const institutesOf = groupBy(institutes, (row) => row.cohort_id);
    const results = cohorts.map((cohort) => ({
      ...toCohortSummary(cohort, this.settings.source),
      contacts: (ownersOf.get(cohort.id) ?? []).map(toContactExport),
      institutes: (institutesOf.get(cohort.id) ?? []).map((row) => row.partner_id),
      has_ethics_approval: cohort.has_ethics_approval,
      ethics_approval_notes: textOrNull(cohort.ethics_approval_notes),
      metadata: cohort.metadata,
    }));
    return { results };
  }
}
