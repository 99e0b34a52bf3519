import type { EntityManager } from 'typeorm';

/**
 * Bulk writes of the synthetic benchmark catalog, for `generateSyntheticCatalog` (the bench and
 * `npm run gen-data`, outside Nest) only. Set-based SQL rather than the import service, unlike the
 * demo data: the benchmarks need catalogs of 50,000 datasets, which the importers would take
 * minutes to write on every run, and none of it is data an operator loads.
 */
export class SyntheticCatalogRepository {
  /**
   * Appends the catalog of `n` datasets in set-based INSERT ... SELECT statements (no per-row
   * round trips), in the caller's transaction. Every name carries `tag`; the datasets are
   * exposed to a new endpoint `endpointName` holding the key whose SHA-256 is `endpointKeyHash`.
   */
  async append(
    manager: EntityManager,
    tag: string,
    n: number,
    endpointName: string,
    endpointKeyHash: string,
  ): Promise<void> {
    await manager.query(
      `INSERT INTO partners (name, acronym, country_code, geo_category, sector_category, is_published)
     SELECT $1 || ' partner ' || g, 'P' || g, 'LU', 'National', 'PUBLIC', g % 2 = 0
     FROM generate_series(1, 20) g`,
      [tag],
    );
    await manager.query(
      `INSERT INTO users (username, first_name, last_name, email, affiliation_id)
     SELECT $1 || '.user' || g, 'User' || g, $1, $1 || g || '@example.org',
       (SELECT min(id) FROM partners WHERE name LIKE $1 || ' %')
     FROM generate_series(1, 50) g`,
      [tag],
    );
    await manager.query(
      `INSERT INTO projects (acronym, title, description, start_date)
     SELECT $1 || '-P' || g, $1 || ' project ' || g, 'Synthetic project', DATE '2020-01-01'
     FROM generate_series(1, greatest(1, $2 / 10)) g`,
      [tag, n],
    );
    await manager.query(
      `INSERT INTO cohorts (name, is_published) SELECT $1 || ' cohort ' || g, true
     FROM generate_series(1, 10) g`,
      [tag],
    );
    await manager.query(
      `WITH p AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS i FROM projects WHERE acronym LIKE $1 || '-P%'),
     pc AS (SELECT count(*) AS c FROM p)
     INSERT INTO datasets (title, description, project_id)
     SELECT $1 || ' dataset ' || g, 'Synthetic dataset ' || g, p.id
     FROM generate_series(1, $2) g CROSS JOIN pc JOIN p ON p.i = g % pc.c
     ORDER BY g`,
      [tag, n],
    );
    const scope = `(SELECT id FROM datasets WHERE title LIKE $1 || ' dataset %')`;
    await manager.query(
      `INSERT INTO data_declarations (dataset_id, title, data_types, access_category, consent_status,
       storage_end_date)
     SELECT d.id, 'declaration ' || k, ARRAY['RNASeq', 'Clinical_data'], 'controlled_access',
       'homogeneous', DATE '2030-12-31'
     FROM ${scope} d, generate_series(1, 2) k`,
      [tag],
    );
    await manager.query(
      `INSERT INTO use_conditions (data_declaration_id, use_class, use_class_note, use_condition_rule)
     SELECT dd.id, 'PUB', 'Acknowledgement required.', 'OBLIGATION'
     FROM data_declarations dd WHERE dd.dataset_id IN ${scope}`,
      [tag],
    );
    await manager.query(
      `INSERT INTO data_declaration_cohorts (data_declaration_id, cohort_id)
     SELECT dd.id, (SELECT min(id) FROM cohorts WHERE name LIKE $1 || ' cohort %')
     FROM data_declarations dd WHERE dd.dataset_id IN ${scope}`,
      [tag],
    );
    await manager.query(
      `INSERT INTO dataset_local_custodians (dataset_id, user_id)
     SELECT d.id, u.id FROM ${scope} d
     JOIN LATERAL (SELECT id FROM users WHERE username LIKE $1 || '.user%'
       ORDER BY (id + d.id) % 50 LIMIT 2) u ON TRUE`,
      [tag],
    );
    await manager.query(
      `INSERT INTO storage_locations (dataset_id, platform, location)
     SELECT d.id, 'HPC', '/srv/synthetic/' || d.id || '/' || k FROM ${scope} d, generate_series(1, 2) k`,
      [tag],
    );
    await manager.query(
      `INSERT INTO legal_bases (dataset_id, legal_basis_codes, personal_data_codes, legal_basis_notes)
     SELECT d.id, '{6.1(a)}', '{Health}', 'Consent' FROM ${scope} d`,
      [tag],
    );
    await manager.query(
      `INSERT INTO endpoints (name, url_pattern, api_key_hash) VALUES ($1, 'https://synthetic.example/\${entity_id}', $2)`,
      [endpointName, endpointKeyHash],
    );
    await manager.query(
      `INSERT INTO exposures (dataset_id, endpoint_id, form_id)
     SELECT d.id, (SELECT id FROM endpoints WHERE lower(name) = lower($2)), 1 FROM ${scope} d`,
      [tag, endpointName],
    );
  }
}
