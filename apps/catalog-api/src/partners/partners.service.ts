import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { SqlParams } from '../common/sql-params';
import { PartnerExport, PartnerField, PartnerRow, toPartnerExport } from './partner.exporter';

export interface PartnerQuery {
  published?: boolean;
  fields?: PartnerField[];
}

@Injectable()
export class PartnersService {
  constructor(@Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings) {}

  async list(
    manager: EntityManager,
    query: PartnerQuery,
  ): Promise<{ results: Partial<PartnerExport>[] }> {
    const params = new SqlParams();
    const where =
      query.published === undefined ? 'TRUE' : `is_published = ${params.add(query.published)}`;
    const rows = await manager.query<PartnerRow[]>(
      `SELECT id, elu_accession, name, acronym, is_clinical, geo_category, sector_category,
         address, country_code, metadata
       FROM partners WHERE ${where} ORDER BY name, id`,
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
