import request from 'supertest';
import { DemoCatalog, KEYS, KeyName, names, startDemoCatalog } from './demo-catalog.fixture';

/*
 * Exact filters on the list endpoints, as DAISY answers them: elixir-luxembourg/daisy
 * web/views/api.py (eb5ced5, "api improvements (#614)"), `get_filtered_entities`, filters a
 * list by every query parameter that names a model attribute, with an exact `=` (so
 * `?elu_accession=ELU_I_111`, `?acronym=X`, `?title=...`) and ignores the others (`API_KEY`).
 * We accept DAISY's attribute names and our record keys (`external_id`, `name`), on datasets,
 * projects, partners and cohorts, and answer a bad value with a 400 naming the parameter.
 */

type Item = { name?: unknown; acronym?: unknown; external_id?: unknown };

describe('exact filters on the catalog list endpoints', () => {
  let c: DemoCatalog;
  const accessionOf = async (table: string, column: string, value: string) =>
    (
      await c.dataSource.query<{ elu_accession: string }[]>(
        `SELECT elu_accession FROM ${table} WHERE ${column} = $1`,
        [value],
      )
    )[0].elu_accession;
  const items = async (path: string, key?: KeyName): Promise<Item[]> => {
    const res = await c.get(path, key).expect(200);
    return (res.body.items ?? res.body.results) as Item[];
  };

  beforeAll(async () => {
    c = await startDemoCatalog();
  });
  afterAll(() => c.close());

  describe('GET /api/datasets', () => {
    it("by accession, title, id or UUID, under DAISY's names and ours", async () => {
      const accession = await c.accession('PD-OMICS imaging');
      const [{ id, elu_uuid }] = await c.dataSource.query<{ id: number; elu_uuid: string }[]>(
        `SELECT id, elu_uuid FROM datasets WHERE title = 'PD-OMICS imaging'`,
      );
      for (const query of [
        `elu_accession=${accession}`,
        `external_id=${accession}`,
        'title=PD-OMICS%20imaging',
        'name=PD-OMICS%20imaging',
        `id=${id}`,
        `id_at_source=${id}`,
        `unique_id=${elu_uuid}`,
        `elu_uuid=${elu_uuid.toUpperCase()}`,
      ]) {
        expect({ query, names: names(await items(`/api/datasets?${query}`, 'global')) }).toEqual({
          query,
          names: ['PD-OMICS imaging'],
        });
      }
    });

    it('is exact (case and spaces count) and ANDs with the other filters', async () => {
      expect(await items('/api/datasets?title=pd-omics%20imaging', 'global')).toEqual([]);
      expect(await items('/api/datasets?title=PD-OMICS%20imaging%20', 'global')).toEqual([]);
      const accession = await c.accession('PD-OMICS imaging');
      const [{ id: epic }] = await c.dataSource.query<{ id: number }[]>(
        `SELECT id FROM projects WHERE acronym = 'EPIC-DREM'`,
      );
      expect(
        await items(`/api/datasets?elu_accession=${accession}&project_id=${epic}`, 'global'),
      ).toEqual([]);
      expect(
        await items(`/api/datasets?elu_accession=${accession}&name=PD-OMICS%20imaging`, 'global'),
      ).toHaveLength(1);
      expect(
        await items(`/api/datasets?elu_accession=${accession}&name=PD-OMICS%20pilot`, 'global'),
      ).toEqual([]);
    });

    it('ignores unknown parameters, the API_KEY in the query included', async () => {
      const all = names(await items('/api/datasets', 'global'));
      expect(all.length).toBeGreaterThan(1);
      expect(names(await items('/api/datasets?acronym=PD-OMICS&foo=1', 'global'))).toEqual(all);
      const res = await request(c.server)
        .get(`/api/datasets?API_KEY=${KEYS.global}&title=PD-OMICS%20imaging`)
        .expect(200);
      expect(names(res.body.items)).toEqual(['PD-OMICS imaging']);
    });

    it('never shows a key more than it may see', async () => {
      const epic = await c.accession('EPIC-DREM sequencing data');
      // alice.white is custodian of PD-OMICS and IRON-DEF only; victor.viewer was granted it.
      expect(await items(`/api/datasets?elu_accession=${epic}`, 'custodian')).toEqual([]);
      expect(names(await items(`/api/datasets?elu_accession=${epic}`, 'granted'))).toEqual([
        'EPIC-DREM sequencing data',
      ]);
      // An endpoint sees only what is exposed to it, with its exposure fields.
      const imaging = await c.accession('PD-OMICS imaging');
      expect(await items(`/api/datasets?external_id=${imaging}`, 'catalogEndpoint')).toEqual([]);
      const [exposed] = await items(
        `/api/datasets?external_id=${await c.accession('PD-OMICS plasma metabolomics')}`,
        'catalogEndpoint',
      );
      expect(exposed).toMatchObject({ name: 'PD-OMICS plasma metabolomics', form_id: 7 });
    });
  });

  describe('GET /api/projects', () => {
    it('by acronym, accession, title or id, with fields and visibility', async () => {
      const accession = await accessionOf('projects', 'acronym', 'EPIC-DREM');
      for (const query of [
        'acronym=EPIC-DREM',
        `elu_accession=${accession}`,
        `external_id=${accession}`,
        'title=Gene%20regulatory%20interactions%20in%20cell%20differentiation',
        'name=Gene%20regulatory%20interactions%20in%20cell%20differentiation',
      ]) {
        const found = await items(`/api/projects?${query}`, 'global');
        expect({ query, acronyms: found.map((p) => p.acronym) }).toEqual({
          query,
          acronyms: ['EPIC-DREM'],
        });
      }
      expect(await items('/api/projects?acronym=epic-drem', 'global')).toEqual([]);
      const res = await c
        .get('/api/projects?acronym=EPIC-DREM&fields=acronym', 'global')
        .expect(200);
      expect(res.body.items).toEqual([{ acronym: 'EPIC-DREM', source: expect.any(String) }]);
      // alice.white holds `protected` on PD-OMICS and IRON-DEF, not on EPIC-DREM.
      expect(await items('/api/projects?acronym=EPIC-DREM', 'custodian')).toEqual([]);
      expect((await items('/api/projects?acronym=PD-OMICS', 'custodian')).length).toBe(1);
    });
  });

  describe('GET /api/partners', () => {
    it('by acronym, name or accession, for every caller, within what the caller sees', async () => {
      const partners = (path: string, key?: KeyName) =>
        items(path, key).then((found) => found.map((p) => p.acronym));
      expect(await partners('/api/partners?acronym=CHL')).toEqual(['CHL']);
      expect(await partners('/api/partners?name=Centre%20Hospitalier%20de%20Luxembourg')).toEqual([
        'CHL',
      ]);
      // Unpublished: only a key sees it, and `published` still narrows.
      expect(await partners('/api/partners?acronym=NWG')).toEqual([]);
      expect(await partners('/api/partners?acronym=NWG', 'unprotected')).toEqual(['NWG']);
      expect(await partners('/api/partners?acronym=NWG&published=true', 'global')).toEqual([]);
      const accession = await accessionOf('partners', 'acronym', 'UKS');
      expect(await partners(`/api/partners?external_id=${accession}`)).toEqual(['UKS']);
      expect(await partners(`/api/partners?elu_accession=${accession}&acronym=CHL`)).toEqual([]);
    });
  });

  describe('GET /api/cohorts', () => {
    it("by DAISY's title, our name or the accession; only published ones", async () => {
      const cohorts = (path: string) => items(path).then((found) => found.map((x) => x.name));
      expect(await cohorts('/api/cohorts?title=Saarland%20Metabolic%20Cohort')).toEqual([
        'Saarland Metabolic Cohort',
      ]);
      expect(await cohorts('/api/cohorts?name=Saarland%20Metabolic%20Cohort')).toEqual([
        'Saarland Metabolic Cohort',
      ]);
      expect(await cohorts('/api/cohorts?name=Northwind%20Volunteers')).toEqual([]);
      const accession = await accessionOf('cohorts', 'name', "Luxembourg Parkinson's Study");
      expect(await cohorts(`/api/cohorts?external_id=${accession}`)).toEqual([
        "Luxembourg Parkinson's Study",
      ]);
    });
  });

  describe('bad values', () => {
    it.each([
      ['/api/datasets?elu_accession=', 'elu_accession', 'must be 1 to 20 characters long'],
      [
        '/api/datasets?external_id=ELU_I_1234567890123456',
        'external_id',
        'must be 1 to 20 characters long',
      ],
      ['/api/datasets?title=a&title=b', 'title', 'must be given once, as a plain value'],
      ['/api/datasets?id=abc', 'id', 'must be a positive integer'],
      ['/api/datasets?unique_id=not-a-uuid', 'unique_id', 'must be a UUID'],
      ['/api/projects?acronym=', 'acronym', 'must be 1 to 200 characters long'],
      ['/api/projects?id_at_source=0', 'id_at_source', 'must be a positive integer'],
      ['/api/partners?name=', 'name', 'must be 1 to 255 characters long'],
      ['/api/cohorts?name=a&name=b', 'name', 'must be given once, as a plain value'],
    ])('%s: 400 naming %s', async (path, parameter, message) => {
      const res = await c.get(path, 'global').expect(400);
      expect(res.body).toEqual({
        status: 'Error',
        description: expect.any(String),
        more: { errors: [{ parameter, message }] },
      });
    });

    it('are refused for public callers too', async () => {
      await c.get('/api/partners?acronym=').expect(400);
      await c.get('/api/cohorts?id=-1').expect(400);
    });
  });

  describe('with the response caches', () => {
    it('answers each filter on its own and sees a change to the data', async () => {
      const first = await c.get('/api/projects?acronym=IRON-DEF', 'global').expect(200);
      const second = await c.get('/api/projects?acronym=PD-OMICS', 'global').expect(200);
      expect(first.body.items.map((p: Item) => p.acronym)).toEqual(['IRON-DEF']);
      expect(second.body.items.map((p: Item) => p.acronym)).toEqual(['PD-OMICS']);
      expect(first.headers.etag).not.toBe(second.headers.etag);
      // Asked again: the same answer (now from the caches), then a rename shows at once.
      const again = await c.get('/api/projects?acronym=IRON-DEF', 'global').expect(200);
      expect(again.headers.etag).toBe(first.headers.etag);
      await c.dataSource.query(
        `UPDATE projects SET acronym = 'IRON-DEF2' WHERE acronym = 'IRON-DEF'`,
      );
      try {
        await c.versionSettled();
        expect(await items('/api/projects?acronym=IRON-DEF', 'global')).toEqual([]);
        expect((await items('/api/projects?acronym=IRON-DEF2', 'global')).length).toBe(1);
      } finally {
        await c.dataSource.query(
          `UPDATE projects SET acronym = 'IRON-DEF' WHERE acronym = 'IRON-DEF2'`,
        );
        await c.versionSettled();
      }
    });
  });

  describe('query count', () => {
    it.each<[string, string, KeyName]>([
      [
        '/api/datasets?title=PD-OMICS%20imaging',
        '/api/datasets?project_title=Iron%20deficiency%20and%20neurodegeneration',
        'catalogEndpoint',
      ],
      ['/api/projects?acronym=PD-OMICS', '/api/projects?fields=name', 'custodian'],
      ['/api/partners?acronym=CHL', '/api/partners?published=false', 'global'],
    ])('%s runs as many queries as %s', async (filtered, other, key) => {
      // The key is known for this catalog version; both paths are first asked here, so both
      // miss the caches.
      await c.get('/api/contracts', key);
      const count = await c.countQueries(filtered, key);
      expect(count).toBeGreaterThan(0);
      expect(await c.countQueries(other, key)).toBe(count);
    });
  });
});

/*
 * What the ELIXIR-LU data catalog sends: elixir-luxembourg/data-catalog
 * datacatalog/connector/daisy_connector.py (fdd13fc) does `requests.get(daisy_url)` on the URL
 * an operator puts in DAISY_API_URLS_DATASET / DAISY_API_URLS_PROJECT
 * (datacatalog/settings.py.template): the key in the URL's API_KEY parameter, no X-API-Key,
 * the headers of python-requests, and possibly an exact filter in that URL. It reads `items`,
 * and per dataset `name`, `external_id`, `metadata` (a JSON string), `form_id`,
 * `request_pdf_enabled`, `data_declarations[].data_types`, `storages[]`,
 * `project_external_id`; per project `acronym`, `name`, `external_id`, `contacts`.
 */
describe('the ELIXIR-LU data catalog DAISY connector', () => {
  let c: DemoCatalog;
  beforeAll(async () => {
    c = await startDemoCatalog();
  });
  afterAll(() => c.close());

  const asConnector = (path: string) =>
    request(c.server)
      .get(path)
      .set('User-Agent', 'python-requests/2.32.3')
      .set('Accept', '*/*')
      .set('Accept-Encoding', 'gzip, deflate')
      .set('Connection', 'keep-alive');

  it('gets the datasets exposed to its endpoint, filtered by the URL it is given', async () => {
    const key = KEYS.catalogEndpoint;
    const all = await asConnector(`/api/datasets?API_KEY=${key}`).expect(200);
    expect(all.body.items.length).toBeGreaterThan(1);
    const accession = await c.accession('PD-OMICS plasma metabolomics');
    const one = await asConnector(`/api/datasets?API_KEY=${key}&elu_accession=${accession}`).expect(
      200,
    );
    expect(one.body.items).toHaveLength(1);
    const [item] = one.body.items;
    expect(item).toMatchObject({
      name: 'PD-OMICS plasma metabolomics',
      external_id: accession,
      form_id: 7,
      request_pdf_enabled: expect.any(Boolean),
      project_external_id: expect.any(String),
      data_declarations: expect.any(Array),
      storages: expect.any(Array),
    });
    expect(typeof JSON.parse(item.metadata as string)).toBe('object');
  });

  it('gets its projects, filtered by acronym when the URL says so', async () => {
    const key = KEYS.catalogEndpoint;
    const res = await asConnector(`/api/projects?API_KEY=${key}&acronym=PD-OMICS`).expect(200);
    expect(res.body.items).toHaveLength(1);
    expect(res.body.items[0]).toMatchObject({
      acronym: 'PD-OMICS',
      name: "Multi-omics of Parkinson's disease",
      external_id: expect.any(String),
      contacts: expect.any(Array),
    });
    expect(
      (await asConnector(`/api/projects?API_KEY=${key}&acronym=IRON-DEF`).expect(200)).body.items,
    ).toEqual([]);
  });
});
