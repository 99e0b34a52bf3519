import { createHash } from 'node:crypto';
import type { Client } from 'pg';

/**
 * A large synthetic catalog written with set-based SQL (generate_series), so 5,000 datasets
 * with their declarations, custodians, storages and exposures take seconds, not minutes.
 * Shape per dataset (as issue 3 sizes it): two declarations (one cohort and one use condition
 * each), two local custodians, one legal basis, two storage locations; every second dataset is
 * exposed to the bench endpoint, every tenth one also has a deprecated exposure. The bench
 * viewer user holds `protected` on every fourth project through a grant.
 * Expects an empty, migrated catalog database (ids are assigned explicitly so rows can be
 * linked without reading them back).
 */
export interface GeneratedCatalog {
  datasets: number;
  projects: number;
  userKey: string;
  endpointKey: string;
}

const PARTNERS = 20;
const CONTACTS = 200;
const USERS = 100;
const COHORTS = 50;
const DATASETS_PER_PROJECT = 50;

/** Deterministic, benchmark-only keys: they guard nothing but a throw-away database. */
export const BENCH_USER_KEY = createHash('sha256').update('bench-user').digest('hex').slice(0, 48);
export const BENCH_ENDPOINT_KEY = createHash('sha256').update('bench-endpoint').digest('hex');

const hash = (key: string) => createHash('sha256').update(key).digest('hex');

export async function generateCatalog(client: Client, datasets: number): Promise<GeneratedCatalog> {
  const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM datasets');
  if (Number(rows[0]?.n) !== 0) throw new Error('the generator expects an empty catalog');
  const projects = Math.max(1, Math.ceil(datasets / DATASETS_PER_PROJECT));
  const n = [datasets];
  const p = [projects];
  const statements: [string, unknown[]][] = [
    [
      `INSERT INTO partners (id, name, acronym, country_code, geo_category, sector_category, is_published, address)
       SELECT g, 'Bench partner ' || g, 'BP' || g, 'LU', 'EU', 'PUBLIC', g % 2 = 0, g || ' rue de la Science'
       FROM generate_series(1, ${PARTNERS}) g`,
      [],
    ],
    [
      `INSERT INTO contacts (id, first_name, last_name, email, type)
       SELECT g, 'Contact', 'Number ' || g, 'contact' || g || '@bench.example', 'Researcher'
       FROM generate_series(1, ${CONTACTS}) g`,
      [],
    ],
    [`INSERT INTO contact_partners SELECT g, 1 + g % ${PARTNERS} FROM generate_series(1, ${CONTACTS}) g`, []],
    [
      `INSERT INTO users (id, username, first_name, last_name, email, affiliation_id)
       SELECT g, 'bench.user' || g, 'User', 'Number ' || g, 'user' || g || '@bench.example', 1 + g % ${PARTNERS}
       FROM generate_series(1, ${USERS}) g`,
      [],
    ],
    [
      `INSERT INTO users (id, username, first_name, last_name, email, api_key_hash)
       VALUES (${USERS + 1}, 'bench.viewer', 'Bench', 'Viewer', 'viewer@bench.example', $1)`,
      [hash(BENCH_USER_KEY)],
    ],
    [
      `INSERT INTO cohorts (id, name, description, url, is_published)
       SELECT g, 'Bench cohort ' || g, 'A synthetic cohort for benchmarks.', 'https://cohort' || g || '.bench.example', true
       FROM generate_series(1, ${COHORTS}) g`,
      [],
    ],
    [`INSERT INTO cohort_owners SELECT g, 1 + g % ${CONTACTS} FROM generate_series(1, ${COHORTS}) g`, []],
    [`INSERT INTO cohort_institutes SELECT g, 1 + g % ${PARTNERS} FROM generate_series(1, ${COHORTS}) g`, []],
    [
      `INSERT INTO projects (id, acronym, title, description, start_date, end_date,
         has_institutional_ethics_approval, institutional_ethics_approval_notes)
       SELECT g, 'BENCH-' || g, 'Bench project number ' || g,
         'A synthetic project whose lay summary is about as long as a real one, to keep the body size realistic.',
         '2020-01-01', '2030-12-31', true, 'Approved by the institutional board.'
       FROM generate_series(1, $1::int) g`,
      p,
    ],
    [
      `INSERT INTO project_local_custodians SELECT g, 1 + g % ${USERS} FROM generate_series(1, $1::int) g`,
      p,
    ],
    [
      `INSERT INTO project_company_personnel SELECT g, 1 + (g + 50) % ${USERS} FROM generate_series(1, $1::int) g`,
      p,
    ],
    [`INSERT INTO project_contacts SELECT g, 1 + g % ${CONTACTS} FROM generate_series(1, $1::int) g`, p],
    [
      `INSERT INTO publications (citation, doi, project_id)
       SELECT 'Author A, Author B. A synthetic publication ' || g || '. Journal of Benchmarks, 2024.',
         '10.1234/bench.' || g, g
       FROM generate_series(1, $1::int) g`,
      p,
    ],
    [
      `INSERT INTO datasets (id, title, description, project_id)
       SELECT g, 'Bench dataset number ' || g,
         'A synthetic dataset: sequencing and clinical data of a benchmark cohort.', 1 + (g - 1) % $2::int
       FROM generate_series(1, $1::int) g`,
      [datasets, projects],
    ],
    [
      `INSERT INTO dataset_local_custodians
       SELECT g, 1 + g % ${USERS} FROM generate_series(1, $1::int) g
       UNION ALL SELECT g, 1 + (g + 37) % ${USERS} FROM generate_series(1, $1::int) g`,
      n,
    ],
    [
      `INSERT INTO data_declarations (id, dataset_id, title, data_types, data_types_notes, access_category,
         subjects_category, de_identification, consent_status, has_special_subjects, storage_end_date,
         storage_duration_criteria)
       SELECT (d - 1) * 2 + k, d, 'Declaration ' || k || ' of dataset ' || d,
         ARRAY['Clinical_data', 'Whole_genome_sequencing'], 'Collected at inclusion.', 'controlled_access',
         'cases_and_controls', 'pseudonymization', 'homogeneous', false, '2035-12-31',
         'Kept until the end of the project plus ten years.'
       FROM generate_series(1, $1::int) d, generate_series(1, 2) k`,
      n,
    ],
    [
      `INSERT INTO data_declaration_cohorts
       SELECT g, 1 + g % ${COHORTS} FROM generate_series(1, $1::int * 2) g`,
      n,
    ],
    [
      `INSERT INTO use_conditions (data_declaration_id, use_class, use_class_note, use_condition_rule)
       SELECT g, 'GRU', 'General research use', 'PERMISSION' FROM generate_series(1, $1::int * 2) g`,
      n,
    ],
    [
      `INSERT INTO legal_bases (id, dataset_id, legal_basis_codes, personal_data_codes, legal_basis_notes)
       SELECT g, g, '{6.1(a)}', '{Health,Genetic}', 'Consent of the participants.'
       FROM generate_series(1, $1::int) g`,
      n,
    ],
    [
      `INSERT INTO legal_basis_data_declarations SELECT g, (g - 1) * 2 + 1 FROM generate_series(1, $1::int) g`,
      n,
    ],
    [
      `INSERT INTO storage_locations (id, dataset_id, platform, category, location)
       SELECT (d - 1) * 2 + k, d, 'bench-fs', (CASE k WHEN 1 THEN 'master' ELSE 'backup' END)::storage_category,
         '/storage/bench/' || d || '/' || k
       FROM generate_series(1, $1::int) d, generate_series(1, 2) k`,
      n,
    ],
    [
      `INSERT INTO endpoints (id, name, url_pattern, api_key_hash)
       VALUES (1, 'bench-endpoint', 'https://catalog.bench.example/datasets/\${id}', $1)`,
      [hash(BENCH_ENDPOINT_KEY)],
    ],
    [
      `INSERT INTO exposures (dataset_id, endpoint_id, form_id, request_pdf_enabled)
       SELECT g, 1, 100 + g % 7, g % 4 = 0 FROM generate_series(2, $1::int, 2) g`,
      n,
    ],
    [
      `INSERT INTO exposures (dataset_id, endpoint_id, form_id, deprecated_at, deprecation_reason)
       SELECT g, 1, 99, now() - interval '30 days', 'Superseded by a newer release.'
       FROM generate_series(5, $1::int, 10) g`,
      n,
    ],
    [
      `INSERT INTO permission_grants (user_id, object_type, object_id)
       SELECT ${USERS + 1}, 'project', g FROM generate_series(4, $1::int, 4) g`,
      p,
    ],
  ];
  await client.query('BEGIN');
  try {
    for (const [sql, params] of statements) await client.query(sql, params);
    await resetSequences(client);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
  await client.query('ANALYZE');
  return { datasets, projects, userKey: BENCH_USER_KEY, endpointKey: BENCH_ENDPOINT_KEY };
}

/** Moves every serial past the explicit ids, so later inserts by the app do not collide. */
async function resetSequences(client: Client): Promise<void> {
  const tables = [
    'partners', 'contacts', 'users', 'cohorts', 'projects', 'datasets',
    'data_declarations', 'legal_bases', 'storage_locations', 'endpoints',
  ];
  for (const table of tables) {
    await client.query(
      `SELECT setval(pg_get_serial_sequence('${table}', 'id'), GREATEST((SELECT max(id) FROM "${table}"), 1))`,
    );
  }
}
