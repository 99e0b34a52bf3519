import { CatalogTestApp, startCatalogApp } from '../../../test/support/catalog-app';
import { daisyDocument, snapshot, writer } from './catalog-writes.fixture';

/**
 * The reference system's own documents (../shared/reference/daisy-json, read in place) import
 * as they are. They refer to records they do not contain (the home institute, projects of other
 * documents): those are refused with a 400 naming each missing reference until they exist.
 */
describe('conformance: the reference documents import as they are', () => {
  let t: CatalogTestApp;
  let w: ReturnType<typeof writer>;
  beforeAll(async () => {
    t = await startCatalogApp();
    w = writer(t.server);
  });
  afterAll(() => t.close());

  const names = async (path: string, field = 'name') =>
    ((await w.get(path).expect(200)).body.items ?? (await w.get(path)).body.results).map(
      (r: Record<string, unknown>) => r[field],
    );

  it('demo/partners.json creates its two partners, keeping their external ids', async () => {
    const res = await w.post('/api/partners', daisyDocument('demo/partners.json')).expect(200);
    expect(res.body).toEqual({ status: 'Success', created: 2, updated: 0 });
    const partners = (await w.get('/api/partners').expect(200)).body.results;
    expect(partners.map((p: { external_id: string }) => p.external_id).sort()).toEqual([
      'ELU_I_19309',
      'ELU_I_1939',
    ]);
  });

  it('test-data/partners.json is the same list: two updates', async () => {
    const res = await w.post('/api/partners', daisyDocument('test-data/partners.json')).expect(200);
    expect(res.body).toEqual({ status: 'Success', created: 0, updated: 2 });
  });

  it('demo/projects.json is refused while its affiliations are unknown, naming each one', async () => {
    const before = await snapshot(t.dataSource);
    const res = await w.post('/api/projects', daisyDocument('demo/projects.json')).expect(400);
    const messages = new Set(res.body.more.errors.map((e: { message: string }) => e.message));
    expect(messages).toEqual(
      new Set([
        'unknown partner "Luxembourg Centre for Systems Biomedicine"',
        'unknown partner "Hummingbird Diagnostics Heidelberg"',
      ]),
    );
    expect(res.body.more.errors[0]).toEqual({
      index: 0,
      field: 'contacts[0].affiliations[0]',
      message: 'unknown partner "Luxembourg Centre for Systems Biomedicine"',
    });
    expect(await snapshot(t.dataSource)).toEqual(before);
  });

  it('demo/projects.json imports once the affiliations exist; a PI who is a user becomes custodian', async () => {
    await w
      .post('/api/partners', {
        items: [
          {
            name: 'Luxembourg Centre for Systems Biomedicine',
            acronym: 'LCSB',
            country_code: 'LU',
          },
          { name: 'Hummingbird Diagnostics Heidelberg', country_code: 'DE' },
        ],
      })
      .expect(200);
    await w
      .post('/api/admin/users', {
        username: 'alice.white',
        first_name: 'Alice',
        last_name: 'White',
        email: 'alice.white@uni.lu',
        affiliation: 'LCSB',
      })
      .expect(201);
    const res = await w.post('/api/projects', daisyDocument('demo/projects.json')).expect(200);
    expect(res.body).toEqual({ status: 'Success', created: 5, updated: 0 });
    const projects = (await w.get('/api/projects').expect(200)).body.items;
    const epic = projects.find((p: { acronym: string }) => p.acronym === 'EPIC-DREM');
    expect(epic.publications).toEqual([
      expect.objectContaining({
        doi: 'doi: 10.1093/nar/gky1240',
        citation: expect.stringMatching(/^Gérard D/),
      }),
    ]);
    const people = epic.contacts.map(
      (c: { last_name: string; role: string }) => `${c.last_name}:${c.role}`,
    );
    expect(people.sort()).toEqual([
      'Black:Principal_Investigator',
      'Blue:Researcher',
      'White:Principal_Investigator',
    ]);
    const [{ n }] = await t.dataSource.query<{ n: string }[]>(
      `SELECT count(*) AS n FROM project_local_custodians x JOIN users u ON u.id = x.user_id
       WHERE u.username = 'alice.white'`,
    );
    // She is a PI of three of the five projects.
    expect(Number(n)).toBe(3);
  });

  it('demo/datasets.json creates its two datasets (data_type_notes, storage category, ignored source)', async () => {
    const res = await w.post('/api/datasets', daisyDocument('demo/datasets.json')).expect(200);
    expect(res.body).toEqual({ status: 'Success', created: 2, updated: 0 });
    const datasets = (await w.get('/api/datasets').expect(200)).body.items;
    const epic = datasets.find((d: { name: string }) => d.name === 'EPIC-DREM Sequencing data');
    expect(epic.project).toBe('EPIC-DREM');
    expect(epic.data_declarations[0].data_types_notes).toBe('Chip-seq  time series data');
    expect(
      epic.data_declarations[0].use_conditions.map((u: { use_class: string }) => u.use_class),
    ).toEqual(['COL', 'DS', 'GS']);
    expect(epic.storages).toEqual([
      {
        platform: 'application',
        location: 'https://webdav-r3lab.uni.lu/',
        accesses: ["The data is available on the sequencing platform's webdav server."],
      },
    ]);
    expect(epic.contacts.map((c: { email: string }) => c.email)).toEqual(['alice.white@uni.lu']);
    const [{ category }] = await t.dataSource.query<{ category: string }[]>(
      `SELECT category FROM storage_locations s JOIN datasets d ON d.id = s.dataset_id
       WHERE d.title = 'EPIC-DREM Sequencing data'`,
    );
    expect(category).toBe('master');
  });

  it('importing demo/datasets.json again changes nothing but counts two updates', async () => {
    const before = await w.get('/api/datasets').expect(200);
    const res = await w.post('/api/datasets', daisyDocument('demo/datasets.json')).expect(200);
    expect(res.body).toEqual({ status: 'Success', created: 0, updated: 2 });
    expect((await w.get('/api/datasets').expect(200)).body.items).toEqual(before.body.items);
  });

  it('test-data/projects.json: people sharing a placeholder e-mail stay distinct people', async () => {
    const res = await w.post('/api/projects', daisyDocument('test-data/projects.json')).expect(200);
    expect(res.body).toEqual({ status: 'Success', created: 2, updated: 0 });
    const project = (await w.get('/api/projects').expect(200)).body.items.find(
      (p: { acronym: string }) => p.acronym === 'In vitro disease modeling',
    );
    expect(project.external_id).toBe('PROJECT-123');
    expect(project.contacts.map((c: { first_name: string }) => c.first_name).sort()).toEqual([
      'Embury',
      'Joanne',
      'Rebecca',
    ]);
    expect(project.publications.map((p: { citation: string }) => p.citation)).toEqual([
      'Paper 1 citation string....',
      'Paper 2 citation string...',
    ]);
    // Colman Level is listed twice (PI and Researcher) in one project: one contact.
    const [{ n }] = await t.dataSource.query<{ n: string }[]>(
      `SELECT count(*) AS n FROM contacts WHERE first_name = 'Colman' AND last_name = 'Level'`,
    );
    expect(Number(n)).toBe(1);
  });

  it('test-data/datasets.json names projects and partners it does not define: 400, nothing written', async () => {
    const before = await snapshot(t.dataSource);
    const res = await w.post('/api/datasets', daisyDocument('test-data/datasets.json')).expect(400);
    expect(res.body.more.errors).toEqual([
      { index: 0, field: 'project', message: 'unknown project "ABCD"' },
      { index: 0, field: 'transfers[0].partner', message: 'unknown partner "ELU_I_44"' },
      { index: 1, field: 'project', message: 'unknown project "Hypertension"' },
      { index: 2, field: 'project', message: 'unknown project "MDPDP"' },
      { index: 2, field: 'transfers[0].partner', message: 'unknown partner "ELU_I_79"' },
      { index: 2, field: 'transfers[1].partner', message: 'unknown partner "ELU_I_80"' },
      { index: 4, field: 'project', message: 'unknown project "PD_Project"' },
    ]);
    expect(await snapshot(t.dataSource)).toEqual(before);
  });

  it('test-data/datasets.json imports once those exist', async () => {
    await w
      .post('/api/projects', {
        items: ['ABCD', 'Hypertension', 'MDPDP', 'PD_Project'].map((acronym) => ({
          acronym,
          name: acronym,
        })),
      })
      .expect(200);
    await w
      .post('/api/partners', {
        items: ['ELU_I_44', 'ELU_I_79', 'ELU_I_80'].map((id) => ({
          external_id: id,
          name: `Partner ${id}`,
        })),
      })
      .expect(200);
    const res = await w.post('/api/datasets', daisyDocument('test-data/datasets.json')).expect(200);
    expect(res.body).toEqual({ status: 'Success', created: 5, updated: 0 });
    const datasets = (await w.get('/api/datasets').expect(200)).body.items;
    expect(datasets).toHaveLength(7);
    const pd = datasets.find((d: { name: string }) => d.name === 'PD data');
    expect(pd.storages).toHaveLength(7);
    expect(pd.data_declarations.map((d: { title: string }) => d.title)).toEqual([
      'XYZ',
      'PD data (german cohort)',
    ]);
    const abcd = datasets.find((d: { name: string }) => d.name === 'ABCD data');
    expect(abcd.external_id).toBe('DATASET-123');
    expect(abcd.transfers).toEqual([
      { partner: 'Partner ELU_I_44', transfer_details: 'Melanie Silver', transfer_date: null },
    ]);
  });

  it('every created record got an accession; kept ones pushed the sequence past them', async () => {
    const [{ missing }] = await t.dataSource.query<{ missing: string }[]>(
      `SELECT (SELECT count(*) FROM partners WHERE elu_accession IS NULL)
            + (SELECT count(*) FROM projects WHERE elu_accession IS NULL)
            + (SELECT count(*) FROM datasets WHERE elu_accession IS NULL) AS missing`,
    );
    expect(Number(missing)).toBe(0);
    const [{ next }] = await t.dataSource.query<{ next: string }[]>(
      `SELECT nextval('elu_accession_seq') AS next`,
    );
    expect(Number(next)).toBeGreaterThan(19309);
  });

  it.each(['demo/elu-core.json', 'test-data/ELX_LU_SUB-1.json'])(
    '%s is not a catalog document (a schema, a submission): 400, nothing written',
    async (path) => {
      const before = await snapshot(t.dataSource);
      const res = await w.post('/api/projects', daisyDocument(path)).expect(400);
      expect(res.body.more.errors).toContainEqual({
        field: 'items',
        message: 'is required and must be an array',
      });
      expect(await snapshot(t.dataSource)).toEqual(before);
    },
  );

  it('counts: what every document created is what the exports list', async () => {
    expect(await names('/api/partners')).toHaveLength(7);
    expect(await names('/api/projects', 'acronym')).toHaveLength(11);
    expect(await names('/api/datasets')).toHaveLength(7);
  });
});
