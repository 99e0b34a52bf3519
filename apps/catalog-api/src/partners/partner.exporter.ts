import type { GeoCategory, SectorCategory } from './partner.entity';

export interface PartnerRow {
  id: number;
  elu_accession: string | null;
  name: string;
  acronym: string | null;
  is_clinical: boolean;
  geo_category: GeoCategory | null;
  sector_category: SectorCategory | null;
  address: string | null;
  country_code: string | null;
  metadata: string;
}

export const PARTNER_FIELDS = ['external_id', 'acronym', 'name'] as const;
export type PartnerField = (typeof PARTNER_FIELDS)[number];

export type PartnerExport = ReturnType<typeof toPartnerExport>;

/**
 * A partner in the export shape. The two categories are left out while unknown: the ELU
 * institution schema has no null for them (docs/decisions/elu-valid-exports.md).
 */
export function toPartnerExport(row: PartnerRow, source: string) {
  return {
    source,
    id_at_source: String(row.id),
    external_id: row.elu_accession,
    name: row.name,
    acronym: row.acronym === '' ? null : row.acronym,
    is_clinical: row.is_clinical,
    ...(row.geo_category === null ? {} : { geo_category: row.geo_category }),
    ...(row.sector_category === null ? {} : { sector_category: row.sector_category }),
    address: row.address === '' ? null : row.address,
    country_code: row.country_code,
    metadata: row.metadata,
  };
}
