import request from 'supertest';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';
import { DemoCatalog, KEYS, startDemoCatalog } from './demo-catalog.fixture';

const KEYED = [
  '/api/projects',
  '/api/datasets',
  '/api/contracts',
  '/api/users',
  '/api/permissions/x',
];
const ALL_READS = ['/api/cohorts', '/api/partners', ...KEYED];

describe('catalog reads: HTTP behaviour', () => {
  let c: DemoCatalog;
  beforeAll(async () => {
    c = await startDemoCatalog();
  });
  afterAll(() => c.close());

  describe('authentication', () => {
    it.each(KEYED)('%s without a key: 401 API key required', async (path) => {
      const res = await c.get(path).expect(401);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['www-authenticate']).toBeDefined();
      expect(res.body).toEqual({ status: 'Error', description: 'API key required', more: {} });
    });

    it.each([...KEYED, '/api/partners'])(
      '%s with an unknown key: 401 Invalid API key',
      async (path) => {
        const res = await request(c.server).get(path).set('X-API-Key', 'not-a-key').expect(401);
        expect(res.body.description).toBe('Invalid API key');
      },
    );

    it.each(KEYED)("%s with an inactive user's key: 401", async (path) => {
      await c.get(path, 'inactive').expect(401);
    });

    it('a 64-character key that is no endpoint key is invalid', async () => {
      await request(c.server).get('/api/datasets').set('X-API-Key', 'z'.repeat(64)).expect(401);
    });

    it('accepts the key in the API_KEY query parameter; the header wins over it', async () => {
      await request(c.server).get(`/api/datasets?API_KEY=${KEYS.global}`).expect(200);
      await request(c.server)
        .get(`/api/datasets?API_KEY=${KEYS.global}`)
        .set('X-API-Key', 'wrong')
        .expect(401);
    });

    it('cohorts are public: a sent key is not even read', async () => {
      await request(c.server).get('/api/cohorts').set('X-API-Key', 'not-a-key').expect(200);
    });
  });

  describe('parameter validation', () => {
    it.each([
      ['/api/projects?project_id=abc', 'project_id'],
      ['/api/projects?project_id=0', 'project_id'],
      ['/api/projects?project_id=-3', 'project_id'],
      ['/api/projects?project_id=99999999999', 'project_id'],
      ['/api/projects?project_id=1&project_id=2', 'project_id'],
      ['/api/projects?fields=password', 'fields'],
      ['/api/projects?fields=', 'fields'],
      ['/api/datasets?project_id=1.5', 'project_id'],
      ['/api/datasets?project_title=', 'project_title'],
      ['/api/contracts?project_id=x', 'project_id'],
      ['/api/partners?published=yes', 'published'],
      ['/api/partners?fields=address', 'fields'],
    ])('%s: 400 naming %s', async (path, parameter) => {
      const res = await c.get(path, 'global').expect(400);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body.status).toBe('Error');
      expect(res.body.more.errors).toEqual([{ parameter, message: expect.any(String) }]);
    });

    it('ignores unknown parameters', async () => {
      await c.get('/api/datasets?title=x&delete=1&objects=2', 'global').expect(200);
    });
  });

  describe('methods and paths', () => {
    // POST on these paths is the import of §5; PUT and DELETE are not served anywhere.
    it.each(ALL_READS)('PUT and DELETE %s: 405 with Allow', async (path) => {
      for (const method of ['put', 'delete'] as const) {
        const res = await request(c.server)[method](path).set('X-API-Key', KEYS.global).send({});
        expect(res.status).toBe(405);
        const importable = !['/api/users', '/api/permissions/x'].includes(path);
        expect(res.headers.allow).toBe(importable ? 'GET, HEAD, POST' : 'GET, HEAD');
        expect(res.body.status).toBe('Error');
      }
    });

    it('unknown path: 404 in the envelope', async () => {
      const res = await c.get('/api/nothing', 'global').expect(404);
      expect(res.body.status).toBe('Error');
    });

    it.each([
      '/api/cohorts',
      '/api/partners',
      '/api/datasets',
      '/api/projects',
      '/api/contracts',
      '/api/users',
    ])('HEAD %s: 200, JSON headers and ETag, no body', async (path) => {
      const get = await c.get(path, 'global').expect(200);
      const head = await request(c.server).head(path).set('X-API-Key', KEYS.global).expect(200);
      expect(head.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(head.headers.etag).toBe(get.headers.etag);
      expect(head.text ?? '').toBe('');
    });
  });

  describe('ETag and cache', () => {
    it.each(ALL_READS.filter((p) => !p.includes('permissions')))(
      '%s: If-None-Match with the current ETag gives 304 without a body',
      async (path) => {
        const first = await c.get(path, 'global').expect(200);
        const etag = first.headers.etag;
        expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
        const again = await c.get(path, 'global').set('If-None-Match', etag).expect(304);
        expect(again.text).toBe('');
        await c.get(path, 'global').set('If-None-Match', '"stale"').expect(200);
      },
    );

    it('a write changes the response and its ETag (cache invalidated)', async () => {
      const before = await c.get('/api/datasets', 'unexposedEndpoint').expect(200);
      expect(before.body.items).toEqual([]);
      await c.dataSource.query(
        `INSERT INTO exposures (dataset_id, endpoint_id, form_id)
         SELECT d.id, e.id, 11 FROM datasets d, endpoints e
         WHERE d.title = 'PD-OMICS imaging' AND e.name = 'Unused catalog'`,
      );
      // A write from outside the app reaches it by NOTIFY, a moment later: wait for it.
      await c.versionSettled();
      const after = await c.get('/api/datasets', 'unexposedEndpoint').expect(200);
      expect(after.body.items.map((i: { name: string }) => i.name)).toEqual(['PD-OMICS imaging']);
      expect(after.headers.etag).not.toBe(before.headers.etag);
      await c
        .get('/api/datasets', 'unexposedEndpoint')
        .set('If-None-Match', before.headers.etag)
        .expect(200);
    });

    it('one caller never gets another caller’s cached view', async () => {
      const global = await c.get('/api/datasets', 'global').expect(200);
      const user = await c.get('/api/datasets', 'unprotected').expect(200);
      expect(global.body.items.length).toBeGreaterThan(0);
      expect(user.body.items).toEqual([]);
    });

    it('only one active exposure per dataset and endpoint (database constraint)', async () => {
      await expect(
        c.dataSource.query(
          `INSERT INTO exposures (dataset_id, endpoint_id, form_id)
           SELECT d.id, e.id, 12 FROM datasets d, endpoints e
           WHERE d.title = 'PD-OMICS imaging' AND e.name = 'Unused catalog'`,
        ),
      ).rejects.toThrow(/UQ_exposures_active_dataset_endpoint/);
    });
  });

  describe('query count', () => {
    const countQueries = (path: string, key: keyof typeof KEYS) => c.countQueries(path, key);

    async function addDatasets(n: number): Promise<void> {
      // Each new dataset gets two declarations, custodians, storages and an exposure.
      await c.dataSource.query(
        `WITH d AS (
           INSERT INTO datasets (title, project_id)
           SELECT 'extra ' || g || ' ' || md5(random()::text), (SELECT id FROM projects LIMIT 1)
           FROM generate_series(1, $1) g RETURNING id),
         dd AS (INSERT INTO data_declarations (dataset_id, title)
           SELECT id, t FROM d, (VALUES ('a'), ('b')) v(t) RETURNING id),
         uc AS (INSERT INTO use_conditions (data_declaration_id, use_class) SELECT id, 'GRU' FROM dd),
         s AS (INSERT INTO storage_locations (dataset_id, platform, location)
           SELECT id, 'HPC', '/x' || g FROM d, generate_series(1, 2) g),
         c AS (INSERT INTO dataset_local_custodians (dataset_id, user_id) SELECT d.id, u.id FROM d, users u
           WHERE u.username IN ('alice.white', 'john.black')),
         l AS (INSERT INTO legal_bases (dataset_id, legal_basis_codes) SELECT id, '{6.1(a)}' FROM d)
         INSERT INTO exposures (dataset_id, endpoint_id, form_id)
         SELECT d.id, e.id, 1 FROM d, endpoints e WHERE e.name = 'ELIXIR Luxembourg Data Catalog'`,
        [n],
      );
      await c.versionSettled();
    }

    it.each<[string, keyof typeof KEYS]>([
      ['/api/datasets', 'global'],
      ['/api/datasets', 'catalogEndpoint'],
      ['/api/datasets', 'custodian'],
      ['/api/projects', 'catalogEndpoint'],
      ['/api/contracts', 'custodian'],
      ['/api/cohorts', 'global'],
      ['/api/partners', 'global'],
    ])('%s (%s) runs the same number of queries for 10 or 60 more datasets', async (path, key) => {
      await addDatasets(10);
      const small = await countQueries(path, key);
      await addDatasets(50);
      const large = await countQueries(path, key);
      expect(large).toBe(small);
      expect(small).toBeLessThanOrEqual(16);
    });

    it('a repeated request for unchanged data costs no query at all', async () => {
      await c.get('/api/datasets', 'global').expect(200);
      expect(await countQueries('/api/datasets', 'global')).toBe(0);
      // A key in the query string is never indexed, so this goes through the whole pipeline:
      // the version is known (no query), the user's key is remembered for that version (no
      // lookup) and the response cache has the body.
      const url = `/api/datasets?API_KEY=${KEYS.custodian}`;
      await request(c.server).get(url).expect(200);
      const spy = jest.spyOn(PostgresQueryRunner.prototype, 'query');
      try {
        await request(c.server).get(url).expect(200);
        expect(spy).not.toHaveBeenCalled();
      } finally {
        spy.mockRestore();
      }
    });
  });
});
