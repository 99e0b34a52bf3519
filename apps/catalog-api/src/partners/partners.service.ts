import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import {
  accessionFilter,
  exactFilterConditions,
  idFilter,
  textFilter,
} from '../common/exact-filters.sql';
import type { ExactFilter } from '../common/query-params';
import { SqlParams } from '../common/sql-params';
import { PartnerExport, PartnerField, PartnerRow, toPartnerExport } from './partner.exporter';

export interface PartnerQuery {
  published?: boolean;
  fields?: PartnerField[];
  /** Values of PARTNER_FILTERS, by parameter name. */
  exact?: Record<string, string | number>;
}

/** The exact filters of `GET /api/partners` (DAISY's partner attributes, then record keys). */
export const PARTNER_FILTERS: readonly ExactFilter[] = [
  idFilter('id'),
  accessionFilter('elu_accession'),
  textFilter(['acronym'], 'acronym', 255),
  textFilter(['name'], 'name', 255),
];

@Injectable()
export class PartnersService {
  constructor(@Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings) {}

  async list(
    manager: EntityManager,
    query: PartnerQuery,
  ): Promise<{ results: Partial<PartnerExport>[] }> {
    const params = new SqlParams();
    const conditions = exactFilterConditions(PARTNER_FILTERS, query.exact ?? {}, params);
    if (query.published !== undefined)
      conditions.push(`is_published = ${params.add(query.published)}`);
    const rows = await manager.query<PartnerRow[]>(
      `SELECT id, elu_accession, name, acronym, is_clinical, geo_category, sector_category,
         address, country_code, metadata
       FROM partners WHERE ${conditions.join(' AND ') || 'TRUE'} ORDER BY name, id`,
      params.values,
    );
    const results = rows.map((row) => {
      const partner = toPartnerExport(row, this.settings.source);
      return query.fields === undefined ? partner : pick(partner, query.fields);
    });
    return { results };
  }
}

function pick<T extends object, K extends keyof T>(record: T, keys: readonly K[]): Partial<T> {
  const picked: Partial<T> = {};
  for (const key of keys) picked[key] = record[key];
  return picked;
}
