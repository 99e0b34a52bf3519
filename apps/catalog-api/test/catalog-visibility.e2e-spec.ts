import { loadDemoData } from '../src/demo/demo-data-loader';
import {
  DEMO_KEYS,
  DemoCatalog,
  KEYS,
  KeyName,
  names,
  startDemoCatalog,
} from './demo-catalog.fixture';

const PD = [
  // The demo drop zone's datasets, granted to the demo researcher.
  'Baseline phenotypes',
  'Baseline whole-exome reads',
  'PD-OMICS blood transcriptomics',
  'PD-OMICS clinical follow-up',
  'PD-OMICS imaging',
  'PD-OMICS plasma metabolomics',
];
const EPIC = [
  'EPIC-DREM chromatin accessibility',
  'EPIC-DREM methylation',
  'EPIC-DREM sequencing data',
];
const IRON = [
  'Iron deficiency integrity data',
  'Iron deficiency pilot',
  'Iron deficiency proteomics',
];
const ALL = [...PD, ...EPIC, ...IRON].sort();
const EXPOSURE_FIELDS = [
  'form_id',
  'deprecated',
  'deprecation_date',
  'released_date',
  'deprecation_notes',
  'request_pdf_enabled',
];

describe('catalog read visibility per key kind', () => {
  let c: DemoCatalog;
  beforeAll(async () => {
    c = await startDemoCatalog();
  });
  afterAll(() => c.close());

  describe('GET /api/datasets', () => {
    it.each<[KeyName, string[]]>([
      ['global', ALL],
      ['steward', ALL],
      ['custodian', [...PD, ...IRON].sort()],
      ['granted', ['EPIC-DREM sequencing data', ...IRON].sort()],
      ['unprotected', []],
      [
        'catalogEndpoint',
        [
          'Baseline phenotypes',
          'Baseline whole-exome reads',
          'EPIC-DREM chromatin accessibility',
          'EPIC-DREM sequencing data',
          'PD-OMICS blood transcriptomics',
          'PD-OMICS plasma metabolomics',
        ],
      ],
      ['portalEndpoint', ['PD-OMICS clinical follow-up', 'PD-OMICS plasma metabolomics']],
      ['unexposedEndpoint', []],
    ])('%s sees exactly its datasets, published or not', async (key, expected) => {
      const res = await c.get('/api/datasets', key).expect(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body.$schema).toMatch(/elu-dataset\.json$/);
      expect(names(res.body.items)).toEqual(expected);
    });

    it.each<KeyName>(['global', 'custodian', 'steward'])(
      '%s gets no exposure fields',
      async (key) => {
        const res = await c.get('/api/datasets', key).expect(200);
        for (const field of EXPOSURE_FIELDS) expect(res.body.items[0]).not.toHaveProperty(field);
      },
    );

    it('an endpoint gets its active exposure, else its latest deprecated one', async () => {
      const res = await c.get('/api/datasets', 'catalogEndpoint').expect(200);
      const byName = new Map<string, Record<string, unknown>>(
        res.body.items.map((item: Record<string, unknown>) => [item.name, item]),
      );
      expect(byName.get('PD-OMICS plasma metabolomics')).toMatchObject({
        form_id: 7,
        deprecated: false,
        deprecation_date: null,
        deprecation_notes: null,
        request_pdf_enabled: true,
      });
      const deprecated = byName.get('EPIC-DREM chromatin accessibility');
      expect(deprecated).toMatchObject({
        deprecated: true,
        deprecation_notes: 'Superseded by a newer release.',
      });
      expect(deprecated?.deprecation_date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
      expect(deprecated?.released_date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
      // The other endpoint's exposure (form 8, no PDF) does not leak into this view.
      const portal = await c.get('/api/datasets', 'portalEndpoint').expect(200);
      const plasma = portal.body.items.find(
        (i: { name: string }) => i.name === 'PD-OMICS plasma metabolomics',
      );
      expect(plasma).toMatchObject({ form_id: 8, request_pdf_enabled: false });
    });

    it('filters by project_id and by project_title (exact, case-insensitive)', async () => {
      const projects = await c.dataSource.query<{ id: number }[]>(
        `SELECT id FROM projects WHERE acronym = 'EPIC-DREM'`,
      );
      const byId = await c.get(`/api/datasets?project_id=${projects[0].id}`, 'global').expect(200);
      expect(names(byId.body.items)).toEqual(EPIC);
      const byTitle = await c
        .get('/api/datasets?project_title=IRON%20DEFICIENCY%20AND%20NEURODEGENERATION', 'global')
        .expect(200);
      expect(names(byTitle.body.items)).toEqual(IRON);
      const partial = await c.get('/api/datasets?project_title=Iron', 'global').expect(200);
      expect(partial.body.items).toEqual([]);
      const filteredForEndpoint = await c
        .get(`/api/datasets?project_id=${projects[0].id}`, 'catalogEndpoint')
        .expect(200);
      expect(names(filteredForEndpoint.body.items)).toEqual([
        'EPIC-DREM chromatin accessibility',
        'EPIC-DREM sequencing data',
      ]);
    });
  });

  describe('GET /api/projects', () => {
    it.each<[KeyName, string[]]>([
      ['global', ['EPIC-DREM', 'IRON-DEF', 'PD-OMICS']],
      ['steward', ['EPIC-DREM', 'IRON-DEF', 'PD-OMICS']],
      ['custodian', ['IRON-DEF', 'PD-OMICS']],
      ['granted', ['IRON-DEF']],
      ['unprotected', []],
      ['catalogEndpoint', ['EPIC-DREM', 'PD-OMICS']],
      ['portalEndpoint', ['PD-OMICS']],
      ['unexposedEndpoint', []],
    ])('%s sees each of its projects once', async (key, expected) => {
      const res = await c.get('/api/projects', key).expect(200);
      expect(res.body.$schema).toBe(
        'https://raw.githubusercontent.com/elixir-luxembourg/json-schemas/v0.0.6/schemas/elu-project.json',
      );
      const acronyms = res.body.items.map((p: { acronym: string }) => p.acronym);
      expect([...acronyms].sort()).toEqual(expected);
    });

    it('has exactly the 15 keys and orders contacts: contacts, custodians, personnel', async () => {
      const res = await c.get('/api/projects', 'global').expect(200);
      const pd = res.body.items.find((p: { acronym: string }) => p.acronym === 'PD-OMICS');
      expect(Object.keys(pd)).toHaveLength(15);
      expect(
        pd.contacts.map((p: { last_name: string; role: string }) => [p.last_name, p.role]),
      ).toEqual([
        ['Dupont', 'Principal_Investigator'],
        ['White', 'Principal_Investigator'],
        ['Blue', 'Researcher'],
      ]);
      expect(pd.publications[0]).toEqual({
        citation: expect.any(String),
        citation_string: pd.publications[0].citation,
        doi: '10.1000/demo.2023.101',
      });
      const epic = res.body.items.find((p: { acronym: string }) => p.acronym === 'EPIC-DREM');
      expect(epic.publications[0]).not.toHaveProperty('doi');
      expect(typeof JSON.parse(pd.metadata)).toBe('object');
    });

    it('keeps only the requested fields plus source', async () => {
      const res = await c.get('/api/projects?fields=acronym,name', 'global').expect(200);
      expect(Object.keys(res.body.items[0]).sort()).toEqual(['acronym', 'name', 'source']);
    });

    it('filters by project_id', async () => {
      const all = await c.get('/api/projects', 'global').expect(200);
      const id = all.body.items[1].id_at_source;
      const res = await c.get(`/api/projects?project_id=${id}`, 'global').expect(200);
      expect(res.body.items.map((p: { id_at_source: string }) => p.id_at_source)).toEqual([id]);
    });
  });

  describe('GET /api/contracts', () => {
    it.each<[KeyName, number]>([
      ['global', 1],
      ['steward', 1],
      ['custodian', 1],
      ['granted', 0],
      ['unprotected', 0],
      ['catalogEndpoint', 1],
      ['portalEndpoint', 1],
      ['unexposedEndpoint', 0],
    ])('%s sees %i contract(s)', async (key, count) => {
      const res = await c.get('/api/contracts', key).expect(200);
      expect(Object.keys(res.body)).toEqual(['items']);
      expect(res.body.items).toHaveLength(count);
    });

    it('exports partner roles with full contacts and filters by project_id', async () => {
      const res = await c.get('/api/contracts', 'global').expect(200);
      const contract = res.body.items[0];
      expect(contract.partners[0]).toMatchObject({
        partner: 'Centre Hospitalier de Luxembourg',
        partner_roles: ['controller'],
        contacts: [
          { last_name: 'Dupont', type: 'Principal_Investigator', partners: [{ acronym: 'CHL' }] },
        ],
      });
      const other = await c
        .get(`/api/contracts?project_id=${contract.project_id + 1}`, 'global')
        .expect(200);
      expect(other.body.items).toEqual([]);
    });

    it('a contract whose project has no exposed dataset is never listed', async () => {
      await c.dataSource.query(
        `INSERT INTO contracts (name, project_id) SELECT 'Unexposed DSA', id FROM projects WHERE acronym = 'IRON-DEF'`,
      );
      const res = await c.get('/api/contracts', 'global').expect(200);
      expect(res.body.items.map((x: { name: string }) => x.name)).toEqual([
        'Data sharing agreement with CHL',
      ]);
    });
  });

  describe('GET /api/partners and /api/cohorts', () => {
    it('without a key: published partners by name, parameters ignored', async () => {
      const res = await c.get('/api/partners?published=false&fields=name').expect(200);
      expect(res.body.results).toHaveLength(4);
      expect(res.body.results[0]).toHaveProperty('address');
      expect(res.body.results.map((p: { name: string }) => p.name)).not.toContain(
        'Northwind Genomics',
      );
    });

    it.each<KeyName>(['global', 'unprotected', 'unexposedEndpoint'])(
      'with a %s key: all partners, filters apply',
      async (key) => {
        expect((await c.get('/api/partners', key).expect(200)).body.results).toHaveLength(5);
        const unpublished = await c.get('/api/partners?published=false', key).expect(200);
        expect(unpublished.body.results.map((p: { name: string }) => p.name)).toEqual([
          'Northwind Genomics',
        ]);
        const published = await c
          .get('/api/partners?published=true&fields=name,acronym', key)
          .expect(200);
        expect(published.body.results).toHaveLength(4);
        expect(Object.keys(published.body.results[0])).toEqual(['name', 'acronym']);
      },
    );

    it('cohorts: published only, by name, the same for everyone', async () => {
      const res = await c.get('/api/cohorts').expect(200);
      expect(res.body.results.map((x: { name: string }) => x.name)).toEqual([
        "Luxembourg Parkinson's Study",
        'Saarland Metabolic Cohort',
      ]);
      expect(res.body.results[0].institutes.every(Number.isInteger)).toBe(true);
    });
  });

  describe('GET /api/users', () => {
    it.each<KeyName>(['global', 'unprotected'])(
      '%s: active users by first then last name',
      async (key) => {
        const res = await c.get('/api/users', key).expect(200);
        const texts = res.body.results.map((u: { text: string }) => u.text);
        expect(texts).toEqual([
          'Alice White',
          'John Black',
          'Olga Auditor',
          'Rita Researcher',
          'Roy Blue',
          'Sara Steward',
          'Victor Viewer',
        ]);
        expect(Number.isInteger(res.body.results[0].id)).toBe(true);
      },
    );

    it('refuses endpoint keys with 403', async () => {
      await c.get('/api/users', 'catalogEndpoint').expect(403);
    });
  });

  describe('GET /api/permissions/{user_oidc_id}', () => {
    it('lists exposed datasets with an active, unexpired access of a user or a contact', async () => {
      const plasma = await c.accession('PD-OMICS plasma metabolomics');
      const epic = await c.accession('EPIC-DREM sequencing data');
      const user = await c.get('/api/permissions/demo-oidc-victor-viewer', 'global').expect(200);
      expect(user.body).toEqual([plasma]);
      const contact = await c
        .get('/api/permissions/demo-oidc-lars-jensen', 'catalogEndpoint')
        .expect(200);
      expect(contact.body).toEqual([epic]);
    });

    it('counts an access expiring today, not one that expired yesterday or is not exposed', async () => {
      await c.dataSource.query(
        `INSERT INTO accesses (dataset_id, user_id, status, grant_expires_on, access_notes)
         SELECT d.id, u.id, 'active', (now() AT TIME ZONE 'UTC')::date + o.days, 'test'
         FROM users u, datasets d, (VALUES ('PD-OMICS blood transcriptomics', 0),
           ('EPIC-DREM sequencing data', -1), ('PD-OMICS imaging', 10)) AS o(title, days)
         WHERE u.username = 'roy.blue' AND d.title = o.title`,
      );
      const res = await c.get('/api/permissions/demo-oidc-roy-blue', 'global').expect(200);
      expect(res.body).toEqual([await c.accession('PD-OMICS blood transcriptomics')]);
    });

    it('says why an access is left out, to the global key only (explain=true)', async () => {
      // Roy's accesses of the test above: one listed, one expired, one on an unexposed dataset.
      const res = await c
        .get('/api/permissions/demo-oidc-roy-blue?explain=true', 'global')
        .expect(200);
      expect(res.body).toEqual({
        subject: 'demo-oidc-roy-blue',
        accessions: [await c.accession('PD-OMICS blood transcriptomics')],
        not_listed: [
          {
            accession: await c.accession('EPIC-DREM sequencing data'),
            title: 'EPIC-DREM sequencing data',
            reason: 'expired',
          },
          {
            accession: await c.accession('PD-OMICS imaging'),
            title: 'PD-OMICS imaging',
            reason: 'not_exposed',
          },
        ],
      });
      for (const key of ['granted', 'catalogEndpoint'] as const) {
        await c.get('/api/permissions/demo-oidc-victor-viewer?explain=true', key).expect(403);
      }
      await c.get('/api/permissions/nobody?explain=true', 'global').expect(404);
    });

    it('a user key may ask only about itself', async () => {
      await c.get('/api/permissions/demo-oidc-victor-viewer', 'granted').expect(200);
      const res = await c.get('/api/permissions/demo-oidc-lars-jensen', 'granted').expect(403);
      expect(res.body.status).toBe('Error');
    });

    it('unknown person: 404 in the envelope', async () => {
      const res = await c.get('/api/permissions/nobody', 'global').expect(404);
      expect(res.body).toEqual({ status: 'Error', description: expect.any(String), more: {} });
    });
  });

  /** Rows of the tables the demo writes, audit trail included. */
  const counts = async () =>
    (
      await c.dataSource.query<{ n: string }[]>(
        `SELECT ${[
          'datasets',
          'contacts',
          'users',
          'endpoints',
          'exposures',
          'permission_grants',
          'accesses',
          'audit_log',
        ]
          .map((table) => `(SELECT count(*) FROM ${table})`)
          .join(" || ',' || ")} AS n`,
      )
    )[0].n;

  it('loading the demo data again changes nothing and returns the same keys', async () => {
    const before = await counts();
    const again = await loadDemoData(c.app, DEMO_KEYS);
    expect(again.loaded).toBe(false);
    expect(await counts()).toBe(before);
    expect(again.users.find((u) => u.username === 'alice.white')?.apiKey).toBe(KEYS.custodian);
    expect(again.endpoints.every((e) => e.apiKey.length === 64)).toBe(true);
  });

  it('completes a load that was interrupted before it was marked, writing nothing twice', async () => {
    const rows = async () => (await counts()).split(',').slice(0, 7).join(',');
    const before = await rows();
    // As if the last step (the accesses and the entry marking the load) had not committed.
    // The trail is append-only: only a delete marked as pruning passes its trigger.
    await c.dataSource.transaction(async (m) => {
      await m.query(`SELECT set_config('audit.prune', 'on', true)`);
      await m.query(`DELETE FROM audit_log WHERE action = 'load-demo'`);
    });
    await c.dataSource.query(
      `DELETE FROM accesses WHERE access_notes = 'Automatically terminated'`,
    );
    const resumed = await loadDemoData(c.app, DEMO_KEYS);
    expect(resumed.loaded).toBe(true);
    expect(await rows()).toBe(before);
    expect((await loadDemoData(c.app, DEMO_KEYS)).loaded).toBe(false);
    await c.versionSettled();
  });
});
