import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { PartnerExport, PartnerField, toPartnerExport } from './partner.exporter';
import { PartnerFilter, PartnersRepository } from './partners.repository';

export interface PartnerQuery extends PartnerFilter {
  fields?: PartnerField[];
}

@Injectable()
export class PartnersService {
  constructor(
    private readonly partners: PartnersRepository,
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
  ) {}

  async list(
    manager: EntityManager,
    query: PartnerQuery,
  ): Promise<{ results: Partial<PartnerExport>[] }> {
    const rows = await this.partners.find(manager, query);
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
