import { DemoCatalog, KeyName, startDemoCatalog } from './demo-catalog.fixture';

/**
 * Two datasets whose lists cover each way an export can differ: one with no project and no
 * list at all, exposed twice and deprecated twice; one with several of each list inserted out of
 * their export order (declarations with and without cohorts and use conditions, legal bases
 * naming several declarations or none, storages with several accesses or none, transfers with
 * and without date or partner, custodians sharing a last name), exposed once active and once
 * deprecated. Returns each one's export as the contract writes it.
 */
async function addEdgeDatasets(c: DemoCatalog) {
  const q = async <T = { id: number }>(sql: string, params: unknown[] = []) =>
    (await c.dataSource.query<T[]>(sql, params))[0];
  const partner = await q(`INSERT INTO partners (name) VALUES ('Edge partner') RETURNING id`);
  const project = await q<{ id: number; elu_accession: string }>(
    `INSERT INTO projects (acronym, title) VALUES ('EDGE', 'Edge project') RETURNING id, elu_accession`,
  );
  const cohortB = await q<{ id: number; elu_accession: string }>(
    `INSERT INTO cohorts (name) VALUES ('Edge cohort B') RETURNING id, elu_accession`,
  );
  const cohortA = await q<{ id: number; elu_accession: string }>(
    `INSERT INTO cohorts (name) VALUES ('Edge cohort A') RETURNING id, elu_accession`,
  );
  const users = [];
  for (const [first, last, email, affiliation] of [
    ['Zed', 'Adams', '', partner.id],
    ['Bob', 'Brown', 'bob@edge.example', null],
    ['Amy', 'Adams', 'amy@edge.example', partner.id],
  ] as const) {
    users.push(
      await q(
        `INSERT INTO users (username, first_name, last_name, email, affiliation_id)
         VALUES ($1, $2, $3, $4, $5) RETURNING id`,
        [`edge.${first.toLowerCase()}`, first, last, email, affiliation],
      ),
    );
  }
  type Row = { id: number; elu_accession: string; elu_uuid: string };
  const bare = await q<Row>(
    `INSERT INTO datasets (title) VALUES ('Edge bare') RETURNING id, elu_accession, elu_uuid`,
  );
  const full = await q<Row>(
    `INSERT INTO datasets (title, description, other_external_id, project_id)
     VALUES ('Edge full', 'Several of each.', 'EDGE-1', $1) RETURNING id, elu_accession, elu_uuid`,
    [project.id],
  );
  const zeta = await q(
    `INSERT INTO data_declarations (dataset_id, title, data_types, data_types_notes,
       access_category, access_procedure, consent_status, has_special_subjects,
       special_subjects_description, embargo_date)
     VALUES ($1, 'zeta declaration', '{b,A,a}', 'Types.', 'controlled_access', '',
       'homogeneous', true, 'Children.', '2030-01-02') RETURNING id`,
    [full.id],
  );
  await q(
    `INSERT INTO data_declarations (dataset_id, title, storage_end_date,
       storage_duration_criteria)
     VALUES ($1, 'alpha declaration', '2031-12-31', '') RETURNING id`,
    [full.id],
  );
  await q(
    `INSERT INTO data_declaration_cohorts (data_declaration_id, cohort_id) VALUES ($1, $2), ($1, $3)`,
    [zeta.id, cohortB.id, cohortA.id],
  );
  await q(
    `INSERT INTO use_conditions (data_declaration_id, use_class, use_class_note,
       use_condition_note, use_condition_rule)
     VALUES ($1, 'PUB', 'Cite us.', NULL, 'OBLIGATION'), ($1, 'GRU', '', 'Any.', 'PERMISSION')`,
    [zeta.id],
  );
  const named = await q(
    `INSERT INTO legal_bases (dataset_id, legal_basis_codes, personal_data_codes, legal_basis_notes)
     VALUES ($1, '{6.1(c),6.1(a)}', '{Health,Genetic}', '') RETURNING id`,
    [full.id],
  );
  await q(
    `INSERT INTO legal_bases (dataset_id, legal_basis_codes, legal_basis_notes)
     VALUES ($1, '{6.1(e)}', 'Public interest.')`,
    [full.id],
  );
  await q(
    `INSERT INTO legal_basis_data_declarations (legal_basis_id, data_declaration_id)
     SELECT $1, id FROM data_declarations WHERE dataset_id = $2`,
    [named.id, full.id],
  );
  const noted = await q(
    `INSERT INTO storage_locations (dataset_id, platform, location)
     VALUES ($1, 'Edge HPC', '') RETURNING id`,
    [full.id],
  );
  await q(
    `INSERT INTO storage_locations (dataset_id, platform, location)
     VALUES ($1, 'Edge tape', '/tape/edge')`,
    [full.id],
  );
  for (const notes of ['First access.', 'Second access.']) {
    const access = await q(
      `INSERT INTO accesses (dataset_id, access_notes) VALUES ($1, $2) RETURNING id`,
      [full.id, notes],
    );
    await q(
      `INSERT INTO access_storage_locations (access_id, storage_location_id) VALUES ($1, $2)`,
      [access.id, noted.id],
    );
  }
  await q(
    `INSERT INTO transfers (dataset_id, partner_id, transfer_details, transfer_date)
     VALUES ($1, NULL, '', NULL), ($1, $2, 'Later.', '2021-05-06'), ($1, $2, NULL, '2020-01-01')`,
    [full.id, partner.id],
  );
  await q(
    `INSERT INTO dataset_local_custodians (dataset_id, user_id) SELECT $1, unnest($2::int[])`,
    [full.id, users.map((u) => u.id)],
  );
  const endpoint = `(SELECT id FROM endpoints WHERE name = 'ELIXIR Luxembourg Data Catalog')`;
  await q(
    `INSERT INTO exposures (dataset_id, endpoint_id, form_id, created_at, deprecated_at,
       deprecation_reason, request_pdf_enabled)
     VALUES ($1, ${endpoint}, 7, '2022-01-01 10:00:00+00', '2022-06-01 00:00:00+00', 'First.', false),
       ($1, ${endpoint}, 8, '2022-02-01 10:00:00+00', '2023-06-01 00:00:00+00', '', true),
       ($2, ${endpoint}, 9, '2021-01-01 10:00:00+00', '2021-03-01 00:00:00+00', 'Old.', false),
       ($2, ${endpoint}, 10, '2024-01-01 10:00:30.7+00', NULL, NULL, true)`,
    [bare.id, full.id],
  );
  await c.versionSettled();
  const common = { source: 'https://catalog.test' };
  const person = (first: string, last: string, email: string | null, affiliations: string[]) => ({
    first_name: first,
    last_name: last,
    email,
    role: 'Principal_Investigator',
    affiliations,
  });
  const declaration = {
    subjects_category: 'cases_and_controls',
    de_identification: 'pseudonymization',
  };
  return {
    bare: {
      ...common,
      id_at_source: String(bare.id),
      external_id: bare.elu_accession,
      name: 'Edge bare',
      description: null,
      elu_uuid: bare.elu_uuid,
      other_external_id: null,
      project: null,
      project_external_id: null,
      data_declarations: [],
      legal_bases: [],
      storages: [],
      transfers: [],
      contacts: [],
      metadata: '{}',
    },
    bareExposure: {
      form_id: 8,
      deprecated: true,
      deprecation_date: '2023-06-01T00:00:00+00:00',
      released_date: '2022-02-01T10:00:00+00:00',
      deprecation_notes: null,
      request_pdf_enabled: true,
    },
    full: {
      ...common,
      id_at_source: String(full.id),
      external_id: full.elu_accession,
      name: 'Edge full',
      description: 'Several of each.',
      elu_uuid: full.elu_uuid,
      other_external_id: 'EDGE-1',
      project: 'EDGE',
      project_external_id: project.elu_accession,
      data_declarations: [
        {
          title: 'zeta declaration',
          cohorts: [
            { cohort: 'Edge cohort A', cohort_external_id: cohortA.elu_accession },
            { cohort: 'Edge cohort B', cohort_external_id: cohortB.elu_accession },
          ],
          data_types: ['A', 'a', 'b'],
          data_types_notes: 'Types.',
          access_category: 'controlled_access',
          access_procedure: null,
          ...declaration,
          consent_status: 'homogeneous',
          has_special_subjects: true,
          special_subjects_description: 'Children.',
          embargo_date: '2030-01-02',
          storage_end_date: null,
          storage_duration_criteria: null,
          use_conditions: [
            {
              use_class: 'PUB',
              use_class_label: 'Publication required',
              duo_iri: 'http://purl.obolibrary.org/obo/DUO_0000019',
              use_class_note: 'Cite us.',
              use_condition_note: null,
              use_condition_rule: 'OBLIGATION',
            },
            {
              use_class: 'GRU',
              use_class_label: 'General research use',
              duo_iri: 'http://purl.obolibrary.org/obo/DUO_0000042',
              use_class_note: null,
              use_condition_note: 'Any.',
              use_condition_rule: 'PERMISSION',
            },
          ],
        },
        {
          title: 'alpha declaration',
          cohorts: [],
          data_types: [],
          data_types_notes: null,
          access_category: null,
          access_procedure: null,
          ...declaration,
          consent_status: null,
          has_special_subjects: null,
          special_subjects_description: null,
          embargo_date: null,
          storage_end_date: '2031-12-31',
          storage_duration_criteria: null,
          use_conditions: [],
        },
      ],
      legal_bases: [
        {
          legal_basis_codes: ['6.1(c)', '6.1(a)'],
          personal_data_codes: ['Health', 'Genetic'],
          // What the catalog does not know is left out where the ELU schema has no null.
          data_declarations: ['zeta declaration', 'alpha declaration'],
        },
        {
          legal_basis_codes: ['6.1(e)'],
          personal_data_codes: [],
          legal_basis_notes: 'Public interest.',
          data_declarations: [],
        },
      ],
      storages: [
        { platform: 'Edge HPC', accesses: ['First access.', 'Second access.'] },
        { platform: 'Edge tape', location: '/tape/edge', accesses: [] },
      ],
      transfers: [
        { partner: 'Edge partner', transfer_details: null, transfer_date: '2020-01-01' },
        { partner: 'Edge partner', transfer_details: 'Later.', transfer_date: '2021-05-06' },
        { transfer_details: null, transfer_date: null },
      ],
      contacts: [
        person('Amy', 'Adams', 'amy@edge.example', ['Edge partner']),
        // Zed Adams (no e-mail) and Bob Brown (no affiliation): the ELU schema cannot take them.
      ],
      metadata: '{}',
    },
    fullExposure: {
      form_id: 10,
      deprecated: false,
      deprecation_date: null,
      released_date: '2024-01-01T10:00:30+00:00',
      deprecation_notes: null,
      request_pdf_enabled: true,
    },
  };
}

interface Item {
  id_at_source: string;
  other_external_id: string | null;
  description: string | null;
  data_declarations: { data_types: string[]; data_types_notes: string | null }[];
  deprecation_date?: string | null;
  released_date?: string;
}

/**
 * PostgreSQL writes each dataset of `/api/datasets` as JSON text; the answer must be what
 * JSON.stringify writes for it: no spaces, its escapes, text sorted and emptied as the export
 * rules say, timestamps in whole seconds.
 */
describe('/api/datasets as JSON text written by the database', () => {
  let c: DemoCatalog;
  let edge: Awaited<ReturnType<typeof addEdgeDatasets>>;
  const awkward = 'a\u0001b"c\\ \n\t é 😀 \u2028 </script>';
  beforeAll(async () => {
    c = await startDemoCatalog();
    const first = '(SELECT min(id) FROM datasets)';
    await c.dataSource.query(
      `UPDATE datasets SET description = '', other_external_id = $1 WHERE id = ${first}`,
      [awkward],
    );
    await c.dataSource.query(
      `UPDATE data_declarations SET data_types = ARRAY['b', 'é', 'Z', '_x', '😀', 'a'],
         data_types_notes = '' WHERE dataset_id = ${first}`,
    );
    await c.dataSource.query(
      `UPDATE exposures SET created_at = '2023-01-02 03:04:05.999999+02',
         deprecated_at = '2024-03-05 09:12:44.5+00' WHERE dataset_id = ${first}`,
    );
    edge = await addEdgeDatasets(c);
  });
  afterAll(() => c.close());

  it.each<KeyName>(['global', 'catalogEndpoint'])(
    'writes every list in its order, empty ones as [] (%s key)',
    async (key) => {
      const res = await c.get('/api/datasets', key).expect(200);
      const { items } = JSON.parse(res.text) as { items: { name: string }[] };
      const text = (name: string) => JSON.stringify(items.find((item) => item.name === name));
      const exposed = key === 'catalogEndpoint';
      // Compared as text: field order, nulls and list order are all part of the answer.
      expect(text('Edge bare')).toBe(
        JSON.stringify(exposed ? { ...edge.bare, ...edge.bareExposure } : edge.bare),
      );
      expect(text('Edge full')).toBe(
        JSON.stringify(exposed ? { ...edge.full, ...edge.fullExposure } : edge.full),
      );
      expect(res.text).toBe(JSON.stringify(JSON.parse(res.text)));
    },
  );

  it.each<KeyName>(['global', 'catalogEndpoint'])(
    'is written as JSON.stringify (%s key)',
    async (key) => {
      const res = await c.get('/api/datasets', key).expect(200);
      const body = JSON.parse(res.text) as { items: Item[] };
      expect(res.text).toBe(JSON.stringify(body));
      const item = body.items.find((i) => i.other_external_id === awkward)!;
      expect(item.description).toBeNull();
      for (const declaration of item.data_declarations) {
        expect(declaration.data_types).toEqual(['Z', '_x', 'a', 'b', 'é', '😀']);
        expect(declaration.data_types_notes).toBeNull();
      }
      if (key === 'catalogEndpoint') {
        expect(item.released_date).toBe('2023-01-02T01:04:05+00:00');
        expect(item.deprecation_date).toBe('2024-03-05T09:12:44+00:00');
      } else {
        expect(item).not.toHaveProperty('released_date');
      }
    },
  );
});
