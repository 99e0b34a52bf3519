import { CatalogTestApp, startCatalogApp } from '../../../test/support/catalog-app';
import { DEMO_DATASETS, DEMO_USERS } from '../src/demo/demo-catalog';
import { DemoCatalog, startDemoCatalog } from './demo-catalog.fixture';
import { writer } from './catalog-writes.fixture';

type Json = Record<string, unknown>;

interface Exported {
  partners: Json;
  cohorts: Json;
  projects: Json;
  datasets: Json;
  contracts: Json;
}

async function exportAll(t: CatalogTestApp): Promise<Exported> {
  const w = writer(t.server);
  const get = async (path: string) => (await w.get(path).expect(200)).body as Json;
  return {
    partners: await get('/api/partners'),
    cohorts: await get('/api/cohorts'),
    projects: await get('/api/projects'),
    datasets: await get('/api/datasets'),
    contracts: await get('/api/contracts'),
  };
}

const records = (doc: Json): Json[] => (doc.items ?? doc.results) as Json[];

/**
 * Ids are local to a database: drop them, and name cohort institutes instead of numbering them
 * (sorted, since the export orders them by id).
 */
function withoutIds(doc: Exported): Exported {
  const partnerNames = new Map(records(doc.partners).map((p) => [Number(p.id_at_source), p.name]));
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value as Json)
        .filter(([key]) => !['id_at_source', 'pk', 'id', 'project_id'].includes(key))
        .map(([key, inner]) => [
          key,
          key === 'institutes'
            ? (inner as number[]).map((id) => String(partnerNames.get(id))).sort()
            : strip(inner),
        ]),
    );
  };
  return strip(doc) as Exported;
}

describe('round trip: export, import, export again', () => {
  let source: DemoCatalog;
  let first: Exported;
  beforeAll(async () => {
    source = await startDemoCatalog();
    first = await exportAll(source);
  });
  afterAll(() => source.close());

  it('the demo export has something of every kind to carry over', () => {
    expect(records(first.partners).length).toBe(5);
    expect(records(first.cohorts).length).toBe(2);
    expect(records(first.projects).length).toBe(3);
    expect(records(first.datasets).length).toBe(DEMO_DATASETS.length);
    expect(records(first.contracts).length).toBe(1);
  });

  it('imports every exported document back into its own catalog unchanged: all updates, same export', async () => {
    const w = writer(source.server);
    for (const kind of ['partners', 'cohorts', 'projects', 'datasets', 'contracts'] as const) {
      const res = await w.post(`/api/${kind}`, first[kind]).expect(200);
      expect(res.body).toEqual({
        status: 'Success',
        created: 0,
        updated: records(first[kind]).length,
      });
    }
    expect(await exportAll(source)).toEqual(first);
  });

  describe('into an empty catalog', () => {
    let target: CatalogTestApp;
    beforeAll(async () => {
      target = await startCatalogApp();
    });
    afterAll(() => target.close());

    it('gives the same export, ids aside', async () => {
      const w = writer(target.server);
      const created = async (kind: keyof Exported, doc: Json) => {
        const res = await w.post(`/api/${kind}`, doc).expect(200);
        expect(res.body).toEqual({ status: 'Success', created: records(doc).length, updated: 0 });
      };
      await created('partners', first.partners);
      // Accounts are not catalog records: the steward creates them (same e-mail addresses).
      for (const u of DEMO_USERS) {
        await w
          .post('/api/admin/users', {
            username: u.username,
            first_name: u.first,
            last_name: u.last,
            email: `${u.username}@lcsb.example.lu`,
            affiliation: 'LCSB',
          })
          .expect(201);
      }
      // Partner ids differ between databases: institutes are referred to by name instead.
      const sourcePartners = new Map(
        records(first.partners).map((p) => [Number(p.id_at_source), p.name]),
      );
      await created('cohorts', {
        results: records(first.cohorts).map((c) => ({
          ...c,
          institutes: (c.institutes as number[]).map((id) => sourcePartners.get(id)),
        })),
      });
      await created('projects', first.projects);
      await created('datasets', first.datasets);
      const sourceProjects = new Map(
        records(first.projects).map((p) => [Number(p.id_at_source), p.acronym]),
      );
      await created('contracts', {
        items: records(first.contracts).map(({ project_id, ...c }) => ({
          ...c,
          project: sourceProjects.get(project_id as number),
        })),
      });
      // Publication state is administration, not part of the export shape.
      for (const cohort of records(first.cohorts)) {
        await w
          .post(`/api/admin/cohorts/${String(cohort.external_id)}/publish`, undefined)
          .expect(200);
      }
      await w
        .post('/api/admin/endpoints', {
          name: 'Catalog',
          url_pattern: 'https://c.example/${entity_id}',
        })
        .expect(201);
      await w
        .post('/api/admin/exposures', {
          dataset: 'PD-OMICS plasma metabolomics',
          endpoint: 'Catalog',
          form_id: 1,
        })
        .expect(201);

      const second = await exportAll(target);
      expect(withoutIds(second)).toEqual(withoutIds(first));
    });
  });
});
