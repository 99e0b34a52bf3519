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
import type { PartnerRow } from './partner.exporter';

/** The exact filters of `GET /api/partners` (DAISY's partner attributes, then record keys). */
export const PARTNER_FILTERS: readonly ExactFilter[] = [
  idFilter('id'),
  accessionFilter('elu_accession'),
  textFilter(['acronym'], 'acronym', 255),
  textFilter(['name'], 'name', 255),
];

export interface PartnerFilter {
  published?: boolean;
  /** Values of PARTNER_FILTERS, by parameter name. */
  exact?: Record<string, string | number>;
}

/** Partners, in the caller's transaction (`manager`); publishing is `TrackedRecordsRepository`'s. */
@Injectable()
export class PartnersRepository {
  /** Partners matching `filter`, by name. */
  find(manager: EntityManager, filter: PartnerFilter): Promise<PartnerRow[]> {
    const params = new SqlParams();
    const conditions = exactFilterConditions(PARTNER_FILTERS, filter.exact ?? {}, params);
    if (filter.published !== undefined)
      conditions.push(`is_published = ${params.add(filter.published)}`);
    return manager.query<PartnerRow[]>(
      `SELECT id, elu_accession, name, acronym, is_clinical, geo_category, sector_category,
         address, country_code, metadata
       FROM partners WHERE ${conditions.join(' AND ') || 'TRUE'} ORDER BY name, id`,
      params.values,
    );
  }

  /** The partner with its published flag. */
  async withPublished(
    manager: EntityManager,
    id: number,
  ): Promise<PartnerRow & { is_published: boolean }> {
    const [row] = await manager.query<(PartnerRow & { is_published: boolean })[]>(
      `SELECT id, elu_accession, name, acronym, is_clinical, geo_category::text, sector_category::text,
             address, country_code, metadata, is_published FROM partners WHERE id = $1`,
      [id],
    );
    return row;
  }
}
