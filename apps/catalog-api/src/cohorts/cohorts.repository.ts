import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  accessionFilter,
  exactFilterConditions,
  idFilter,
  textFilter,
  type ExactFilter,
} from '../common/exact-filters.sql';
import { SqlParams } from '../common/sql-params';
import { FullContactRow } from '../contacts/contact.exporter';
import { FULL_CONTACT_COLUMNS } from '../contacts/contact.sql';
import type { CohortSummaryRow } from './cohort.exporter';

/** The exact filters of `GET /api/cohorts` (DAISY's cohort attributes, then record keys). */
export const COHORT_FILTERS: readonly ExactFilter[] = [
  idFilter('id'),
  accessionFilter('elu_accession'),
  textFilter(['title', 'name'], 'name', 255),
];

export interface CohortRow extends CohortSummaryRow {
  has_ethics_approval: boolean;
  ethics_approval_notes: string | null;
  metadata: string;
}

export type CohortOwnerRow = FullContactRow & { cohort_id: number };

/** Cohorts with their owners and institutes, each keyed by its cohort. */
export interface CohortRows {
  cohorts: CohortRow[];
  owners: CohortOwnerRow[];
  institutes: { cohort_id: number; partner_id: number }[];
}

/** Cohorts, in the caller's transaction (`manager`); publishing is `TrackedRecordsRepository`'s. */
@Injectable()
export class CohortsRepository {
  /**
   * Published cohorts by name, narrowed by COHORT_FILTERS (`exact`: their values by parameter
   * name), with their owners and institutes: three queries whatever their number.
   */
  async findPublished(
    manager: EntityManager,
    exact: Record<string, string | number>,
  ): Promise<CohortRows> {
    const params = new SqlParams();
    const conditions = ['is_published', ...exactFilterConditions(COHORT_FILTERS, exact, params)];
    const cohorts = await manager.query<CohortRow[]>(
      `SELECT id, elu_accession, name, description, url, has_ethics_approval,
         ethics_approval_notes, metadata
       FROM cohorts WHERE ${conditions.join(' AND ')} ORDER BY name, id`,
      params.values,
    );
    const ids = cohorts.map((cohort) => cohort.id);
    const owners = await manager.query<CohortOwnerRow[]>(
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
    return { cohorts, owners, institutes };
  }

  /** The cohort's summary with its published flag. */
  async summaryWithPublished(
    manager: EntityManager,
    id: number,
  ): Promise<CohortSummaryRow & { is_published: boolean }> {
    const [cohort] = await manager.query<(CohortSummaryRow & { is_published: boolean })[]>(
      'SELECT id, elu_accession, name, description, url, is_published FROM cohorts WHERE id = $1',
      [id],
    );
    return cohort;
  }
}
