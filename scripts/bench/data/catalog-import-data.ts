/**
 * Import documents in the catalog's export shape, `count` records each, deterministic. The
 * sizes are those of real records: a partner ~150 bytes, a dataset with a contact, a storage
 * with an access, and a declaration with two use conditions ~570 bytes (the DAISY reference
 * documents hold 270 and 1,400: MAX_IMPORT_BODY_BYTES fits 50,000 records of up to 640).
 */
export interface PartnerRow {
  name: string;
  acronym: string;
  geo_category: string;
  sector_category: string;
  country_code: string;
  address: string;
}

export function partnerRows(count: number, tag: string): PartnerRow[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `${tag} institute ${i}`,
    acronym: `${tag.toUpperCase()}${i}`,
    geo_category: i % 3 === 0 ? 'International' : 'National',
    sector_category: i % 2 === 0 ? 'PUBLIC' : 'PRIVATE_NP',
    country_code: 'LU',
    address: `${i} avenue de la Recherche, L-4362 Esch-sur-Alzette`,
  }));
}

/** The same partners as CSV lines in PartnerRow's column order (for COPY). */
export function partnersCsv(rows: PartnerRow[]): string {
  const quote = (value: string) => `"${value.replace(/"/g, '""')}"`;
  return rows
    .map((r) => [r.name, r.acronym, r.geo_category, r.sector_category, r.country_code, r.address].map(quote).join(','))
    .join('\n');
}

export function datasetItems(count: number, tag: string, project: string): unknown[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `${tag} dataset ${i}`,
    external_id: `${tag.toUpperCase()}-DS-${i}`,
    project,
    description: `Clinical and omics data of cohort ${i % 97}, visit ${i % 7}.`,
    contacts: [
      { first_name: 'Ada', last_name: `Keeper ${i % 50}`, email: `keeper${i % 50}@uni.example`, role: 'Principal_Investigator' },
    ],
    storages: [{ platform: 'Other', location: `https://store.example/${tag}/${i}`, category: 'master', accesses: [`Keeper ${i % 50}`] }],
    data_declarations: [
      {
        title: `${tag} declaration ${i}`,
        data_types: ['Clinical_data', 'Metabolomics'],
        subjects_category: 'cases_and_controls',
        use_conditions: [
          { use_class: 'PS', use_condition_rule: 'OBLIGATION' },
          { use_class: 'PUB', use_condition_rule: 'OBLIGATION' },
        ],
      },
    ],
  }));
}
