import request from 'supertest';
import {
  CatalogTestApp,
  startCatalogApp,
  TEST_GLOBAL_KEY,
} from '../../../test/support/catalog-app';
import { loadDemoData } from '../src/demo/demo-data-loader';
import { DEMO_KEYS, KEYS } from './demo-catalog.fixture';
import { expectRefusedUnchanged, writer } from './catalog-writes.fixture';

const KINDS = ['partners', 'cohorts', 'projects', 'datasets', 'contracts'] as const;
const MAX_BODY_BYTES = 16384;

describe('catalog imports: validation, refusals, concurrency, cache freshness', () => {
  let t: CatalogTestApp;
  let w: ReturnType<typeof writer>;
  beforeAll(async () => {
    // Imports have their own limit; both small here.
    t = await startCatalogApp({
      MAX_BODY_BYTES: String(MAX_BODY_BYTES),
      MAX_IMPORT_BODY_BYTES: String(MAX_BODY_BYTES),
    });
    await loadDemoData(t.app, DEMO_KEYS);
    w = writer(t.server);
  });
  afterAll(() => t.close());

  /** Sends a refused request and checks that the catalog is exactly as before. */
  async function refused(send: () => request.Test, status: number) {
    const res = await expectRefusedUnchanged(t.dataSource, send, status);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    return res.body as { description: string; more: { errors?: unknown[] } };
  }

  describe('who may write', () => {
    const doc = { items: [{ name: 'Key Test Institute' }] };
    it.each(KINDS)(
      'POST /api/%s: a user key gets 403, an endpoint key 403, no key 401, a wrong key 401',
      async (kind) => {
        const user = await refused(() => w.post(`/api/${kind}`, doc, KEYS.steward), 403);
        expect(user.description).toBe('Write operations require the global API key');
        await refused(() => w.post(`/api/${kind}`, doc, KEYS.portalEndpoint), 403);
        await refused(() => w.post(`/api/${kind}`, doc, null), 401);
        await refused(() => w.post(`/api/${kind}`, doc, 'x'.repeat(40)), 401);
      },
    );

    it('the key may also come in the API_KEY query parameter', async () => {
      await request(t.server)
        .post(`/api/partners?API_KEY=${TEST_GLOBAL_KEY}`)
        .send(doc)
        .expect(200);
    });
  });

  describe('bodies', () => {
    it('a body over MAX_IMPORT_BODY_BYTES gets 413', async () => {
      const big = { items: [{ name: 'x', address: 'a'.repeat(MAX_BODY_BYTES) }] };
      await refused(() => w.post('/api/partners', big), 413);
    });

    it('a body that is not JSON gets 415', async () => {
      await refused(
        () =>
          request(t.server)
            .post('/api/partners')
            .set('X-API-Key', TEST_GLOBAL_KEY)
            .set('Content-Type', 'text/plain')
            .send('name=x'),
        415,
      );
      await refused(
        () =>
          request(t.server)
            .post('/api/datasets')
            .set('X-API-Key', TEST_GLOBAL_KEY)
            .type('form')
            .send({ items: 'x' }),
        415,
      );
    });

    it('malformed JSON gets 400', async () => {
      await refused(
        () =>
          request(t.server)
            .post('/api/projects')
            .set('X-API-Key', TEST_GLOBAL_KEY)
            .set('Content-Type', 'application/json')
            .send('{"items": ['),
        400,
      );
    });

    it('a body without items, or items that is not an array, gets 400', async () => {
      const none = await refused(() => w.post('/api/cohorts', { records: [] }), 400);
      expect(none.more.errors).toEqual([
        { field: 'records', message: 'unknown field' },
        { field: 'items', message: 'is required and must be an array' },
      ]);
      await refused(() => w.post('/api/cohorts', [{ name: 'x' }]), 400);
      await refused(() => w.post('/api/cohorts', { items: { name: 'x' } }), 400);
    });
  });

  describe('every problem of the document at once, with item index and field', () => {
    it('wrong types', async () => {
      const body = await refused(
        () =>
          w.post('/api/partners', {
            items: [
              { name: 'Fine Partner' },
              { name: 42, is_clinical: 'yes' },
              { name: 'Odd', country_code: 'LUX', geo_category: 'Mars', metadata: '[1]' },
            ],
          }),
        400,
      );
      expect(body.more.errors).toEqual([
        { index: 1, field: 'name', message: 'must be a string, not a number' },
        { index: 1, field: 'is_clinical', message: 'must be true or false, not a string' },
        {
          index: 2,
          field: 'geo_category',
          message: 'must be one of: EU, Non_EU, International, National',
        },
        {
          index: 2,
          field: 'country_code',
          message: 'must be an ISO 3166-1 alpha-2 code such as LU',
        },
        { index: 2, field: 'metadata', message: 'must be a JSON object encoded as a string' },
      ]);
      expect(body.description).toBe('Invalid input: 5 problems');
    });

    it('wrong types deep inside a dataset', async () => {
      const body = await refused(
        () =>
          w.post('/api/datasets', {
            items: [
              {
                name: 'Deep',
                data_declarations: [
                  {
                    title: 'D1',
                    embargo_date: '2024-02-30',
                    use_conditions: [{ use_class: 'XYZ' }],
                  },
                ],
                storages: 'everywhere',
              },
            ],
          }),
        400,
      );
      expect(body.more.errors).toEqual([
        {
          index: 0,
          field: 'data_declarations[0].embargo_date',
          message: 'must be a date YYYY-MM-DD',
        },
        {
          index: 0,
          field: 'data_declarations[0].use_conditions[0].use_class',
          message: expect.stringMatching(/^must be one of: NRES, GRU/),
        },
        { index: 0, field: 'storages', message: 'must be an array, not a string' },
      ]);
    });

    it('unknown fields, at any depth', async () => {
      const body = await refused(
        () =>
          w.post('/api/projects', {
            items: [
              {
                acronym: 'UF',
                name: 'Unknown fields',
                colour: 'red',
                contacts: [{ first_name: 'A', last_name: 'B', shoe_size: 42 }],
              },
            ],
            extra: true,
          }),
        400,
      );
      expect(body.more.errors).toEqual([
        { field: 'extra', message: 'unknown field' },
        { index: 0, field: 'colour', message: 'unknown field' },
        { index: 0, field: 'contacts[0].shoe_size', message: 'unknown field' },
      ]);
    });

    it('required fields', async () => {
      const body = await refused(
        () =>
          w.post('/api/projects', {
            items: [{ name: 'No acronym' }, { acronym: '  ', name: 'x' }],
          }),
        400,
      );
      expect(body.more.errors).toEqual([
        { index: 0, field: 'acronym', message: 'is required' },
        { index: 1, field: 'acronym', message: 'must not be empty' },
      ]);
    });

    it('missing references', async () => {
      const datasets = await refused(
        () =>
          w.post('/api/datasets', {
            items: [
              {
                name: 'Refs',
                project: 'NOPE',
                data_declarations: [
                  { title: 'D', cohorts: [{ cohort: 'No Such Cohort', cohort_external_id: null }] },
                ],
                transfers: [{ partner: 'Nobody Inc' }],
              },
            ],
          }),
        400,
      );
      expect(datasets.more.errors).toEqual([
        { index: 0, field: 'project', message: 'unknown project "NOPE"' },
        {
          index: 0,
          field: 'data_declarations[0].cohorts[0]',
          message: 'unknown cohort "No Such Cohort"',
        },
        { index: 0, field: 'transfers[0].partner', message: 'unknown partner "Nobody Inc"' },
      ]);
      const cohorts = await refused(
        () => w.post('/api/cohorts', { items: [{ name: 'C', institutes: [999999, 'Nowhere'] }] }),
        400,
      );
      expect(cohorts.more.errors).toEqual([
        { index: 0, field: 'institutes[0]', message: 'unknown partner 999999' },
        { index: 0, field: 'institutes[1]', message: 'unknown partner "Nowhere"' },
      ]);
      const contracts = await refused(
        () =>
          w.post('/api/contracts', {
            items: [
              {
                name: 'K',
                project: 'PD-OMICS',
                local_custodians: [
                  {
                    first_name: 'No',
                    last_name: 'User',
                    email: 'nobody@example.org',
                    role: 'Principal_Investigator',
                    affiliations: [],
                  },
                ],
                partners: [{ partner: 'Nowhere', partner_roles: ['controller'] }],
              },
              { name: 'L', project_id: 999999 },
            ],
          }),
        400,
      );
      expect(contracts.more.errors).toEqual([
        { index: 0, field: 'local_custodians[0].email', message: 'no user has this email' },
        { index: 0, field: 'partners[0].partner', message: 'unknown partner "Nowhere"' },
        { index: 1, field: 'project_id', message: 'no project has id 999999' },
      ]);
    });

    it('duplicate natural keys inside one document', async () => {
      const partners = await refused(
        () =>
          w.post('/api/partners', {
            items: [
              { name: 'Twin' },
              { name: 'TWIN ' },
              { name: 'Other', external_id: 'X-1' },
              { name: 'Third', external_id: 'X-1' },
            ],
          }),
        400,
      );
      expect(partners.more.errors).toEqual([
        { index: 1, field: 'name', message: 'duplicates item 0 of this document' },
        { index: 3, field: 'external_id', message: 'duplicates item 2 of this document' },
      ]);
      const projects = await refused(
        () =>
          w.post('/api/projects', {
            items: [
              { acronym: 'DUP', name: 'One' },
              { acronym: 'dup', name: 'Two' },
            ],
          }),
        400,
      );
      expect(projects.more.errors).toEqual([
        { index: 1, field: 'acronym', message: 'duplicates item 0 of this document' },
      ]);
      const datasets = await refused(
        () =>
          w.post('/api/datasets', {
            items: [
              {
                name: 'DS',
                data_declarations: [{ title: 'T' }, { title: 't' }],
                legal_bases: [
                  { legal_basis_codes: [], personal_data_codes: [], data_declarations: ['Other'] },
                ],
              },
              { name: 'ds' },
            ],
          }),
        400,
      );
      expect(datasets.more.errors).toEqual([
        {
          index: 0,
          field: 'data_declarations[1].title',
          message: 'duplicates data_declarations[0]',
        },
        {
          index: 0,
          field: 'legal_bases[0].data_declarations[0]',
          message: 'no data declaration titled "Other"',
        },
        { index: 1, field: 'name', message: 'duplicates item 0 of this document' },
      ]);
      const contracts = await refused(
        () =>
          w.post('/api/contracts', {
            items: [
              { name: 'C', project: 'PD-OMICS' },
              { name: 'c', project: 'PD-OMICS' },
            ],
          }),
        400,
      );
      expect(contracts.more.errors).toEqual([
        { index: 1, field: 'name', message: 'duplicates item 0 of this document' },
      ]);
    });

    it('an external_id that contradicts the record found by name', async () => {
      const [{ elu_accession: lcsb }] = await t.dataSource.query<{ elu_accession: string }[]>(
        `SELECT elu_accession FROM partners WHERE acronym = 'LCSB'`,
      );
      const body = await refused(
        () =>
          w.post('/api/partners', {
            items: [
              { name: 'Luxembourg Centre for Systems Biomedicine', external_id: 'ELU_I_999999' },
            ],
          }),
        400,
      );
      expect(body.more.errors).toEqual([
        {
          index: 0,
          field: 'external_id',
          message: `partner "Luxembourg Centre for Systems Biomedicine" already exists with external_id ${lcsb}`,
        },
      ]);
    });
  });

  describe('upserts', () => {
    it('by external_id: renames keep the record; absent fields keep their value', async () => {
      await w
        .post('/api/partners', {
          items: [
            { external_id: 'ELU_I_500000', name: 'Before', acronym: 'BF', is_clinical: true },
          ],
        })
        .expect(200);
      const res = await w
        .post('/api/partners', { items: [{ external_id: 'ELU_I_500000', name: 'After' }] })
        .expect(200);
      expect(res.body).toEqual({ status: 'Success', created: 0, updated: 1 });
      const rows = await t.dataSource.query(
        `SELECT name, acronym, is_clinical FROM partners WHERE elu_accession = 'ELU_I_500000'`,
      );
      expect(rows).toEqual([{ name: 'After', acronym: 'BF', is_clinical: true }]);
    });

    it('accessions come from the sequence and are never handed out twice', async () => {
      const res = await w
        .post('/api/cohorts', { items: [{ name: 'Sequenced A' }, { name: 'Sequenced B' }] })
        .expect(200);
      expect(res.body.created).toBe(2);
      const rows = await t.dataSource.query<{ elu_accession: string }[]>(
        `SELECT elu_accession FROM cohorts WHERE name LIKE 'Sequenced %' ORDER BY id`,
      );
      const numbers = rows.map((r) => Number(r.elu_accession.replace('ELU_I_', '')));
      expect(numbers[0]).toBeGreaterThan(500000);
      expect(numbers[1]).toBeGreaterThan(numbers[0]);
    });
  });

  it('every write bumps the data version: a cached list shows the change at once', async () => {
    const first = await w.get('/api/partners').expect(200);
    await w.get('/api/partners').set('If-None-Match', String(first.headers.etag)).expect(304);
    await w.post('/api/partners', { items: [{ name: 'Freshly Imported' }] }).expect(200);
    const after = await w
      .get('/api/partners')
      .set('If-None-Match', String(first.headers.etag))
      .expect(200);
    expect(after.body.results.map((p: { name: string }) => p.name)).toContain('Freshly Imported');
    // Also the admin routes: publishing shows in the public list immediately.
    const publicBefore = await w.get('/api/partners', null).expect(200);
    expect(publicBefore.body.results.map((p: { name: string }) => p.name)).not.toContain(
      'Freshly Imported',
    );
    const [{ id }] = await t.dataSource.query<{ id: number }[]>(
      `SELECT id FROM partners WHERE name = 'Freshly Imported'`,
    );
    await w.post(`/api/admin/partners/${id}/publish`, undefined).expect(200);
    const publicAfter = await w.get('/api/partners', null).expect(200);
    expect(publicAfter.body.results.map((p: { name: string }) => p.name)).toContain(
      'Freshly Imported',
    );
  });

  it('two imports of the same document at once end with one copy of each record', async () => {
    const doc = {
      items: Array.from({ length: 30 }, (_, i) => ({
        acronym: `RACE-${i}`,
        name: `Race project ${i}`,
        contacts: [
          {
            first_name: 'Rita',
            last_name: `Racer${i % 3}`,
            email: `rita${i % 3}@race.example`,
            role: 'Data_Manager',
            affiliations: ['LCSB'],
          },
        ],
        publications: [{ citation: `Paper ${i}` }],
      })),
    };
    const results = await Promise.all([w.post('/api/projects', doc), w.post('/api/projects', doc)]);
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    expect(results.map((r) => r.body.created).sort()).toEqual([0, 30]);
    expect(results.map((r) => r.body.updated).sort()).toEqual([0, 30]);
    const [counts] = await t.dataSource.query<
      { projects: string; contacts: string; publications: string }[]
    >(
      `SELECT (SELECT count(*) FROM projects WHERE acronym LIKE 'RACE-%') AS projects,
         (SELECT count(*) FROM contacts WHERE email LIKE '%@race.example') AS contacts,
         (SELECT count(*) FROM publications p JOIN projects pr ON pr.id = p.project_id WHERE pr.acronym LIKE 'RACE-%') AS publications`,
    );
    expect(counts).toEqual({ projects: '30', contacts: '3', publications: '30' });
  });

  it('each import writes one audit entry per record, naming the key kind', async () => {
    const res = await w.get('/api/admin/audit?object=project').expect(200);
    const entries = res.body.results.filter((e: { change: { acronym?: string } }) =>
      e.change.acronym?.startsWith('RACE-'),
    );
    expect(entries).toHaveLength(60);
    expect(entries[0].actor).toEqual({ kind: 'global', id: null, name: 'global' });
    expect(new Set(entries.map((e: { action: string }) => e.action))).toEqual(
      new Set(['create', 'update']),
    );
  });
});
