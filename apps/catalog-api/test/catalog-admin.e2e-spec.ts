import request from 'supertest';
import {
  CatalogTestApp,
  startCatalogApp,
  TEST_GLOBAL_KEY,
} from '../../../test/support/catalog-app';
import { loadDemoData } from '../src/demo/demo-data-loader';
import { DEMO_DATASETS } from '../src/demo/demo-catalog';
import { DEMO_KEYS, KEYS } from './demo-catalog.fixture';
import { expectRefusedUnchanged, writer } from './catalog-writes.fixture';

describe('catalog administration routes', () => {
  let t: CatalogTestApp;
  let w: ReturnType<typeof writer>;
  beforeAll(async () => {
    t = await startCatalogApp();
    await loadDemoData(t.app, DEMO_KEYS);
    w = writer(t.server);
  });
  afterAll(() => t.close());

  async function refused(send: () => request.Test, status: number) {
    const res = await expectRefusedUnchanged(t.dataSource, send, status);
    return res.body as { description: string; more: { errors?: unknown[] } };
  }

  const accession = async (table: string, column: string, value: string) =>
    (
      await t.dataSource.query<{ elu_accession: string }[]>(
        `SELECT elu_accession FROM ${table} WHERE ${column} = $1`,
        [value],
      )
    )[0].elu_accession;

  describe('only the global key', () => {
    const routes: [string, string, unknown][] = [
      [
        'post',
        '/api/admin/users',
        { username: 'u1', first_name: 'U', last_name: 'One', email: 'u1@x.org' },
      ],
      ['post', '/api/admin/users/1/api-key', undefined],
      ['patch', '/api/admin/users/1', { is_active: false }],
      ['post', '/api/admin/endpoints', { name: 'E', url_pattern: 'https://e.org/${entity_id}' }],
      ['post', '/api/admin/exposures', { dataset: 'x', endpoint: 'y', form_id: 1 }],
      ['delete', '/api/admin/exposures/1', { reason: 'r' }],
      [
        'post',
        '/api/admin/grants',
        { user: 'roy.blue', permission: 'protected', object_type: 'project', object: 'PD-OMICS' },
      ],
      [
        'delete',
        '/api/admin/grants',
        {
          user: 'victor.viewer',
          permission: 'protected',
          object_type: 'project',
          object: 'IRON-DEF',
        },
      ],
      ['post', '/api/admin/partners/1/publish', undefined],
      ['post', '/api/admin/cohorts/1/unpublish', undefined],
    ];
    it.each(routes)(
      '%s %s: user and endpoint keys 403, no key 401, nothing changed',
      async (method, path, body) => {
        const send = (key: string | null) =>
          method === 'post'
            ? w.post(path, body, key)
            : method === 'patch'
              ? w.patch(path, body, key)
              : w.delete(path, body, key);
        await refused(() => send(KEYS.steward), 403);
        await refused(() => send(KEYS.catalogEndpoint), 403);
        await refused(() => send(null), 401);
      },
    );

    it('GET /api/admin/audit: a user key 403, no key 401', async () => {
      await w.get('/api/admin/audit', KEYS.steward).expect(403);
      await w.get('/api/admin/audit', null).expect(401);
    });

    it('a POST-only route answers GET with 405 and Allow', async () => {
      const res = await w.get('/api/admin/users').expect(405);
      expect(res.headers.allow).toBe('POST');
    });
  });

  describe('users and keys', () => {
    let id: number;
    let firstKey: string;

    it('creates a user: 201, the key shown once, only its hash stored', async () => {
      const res = await w
        .post('/api/admin/users', {
          username: 'nina.new',
          first_name: 'Nina',
          last_name: 'New',
          email: 'nina.new@lcsb.example.lu',
          oidc_id: 'oidc-nina',
          groups: ['auditor'],
          affiliation: 'LCSB',
        })
        .expect(201);
      expect(res.body).toEqual({
        id: expect.any(Number),
        username: 'nina.new',
        first_name: 'Nina',
        last_name: 'New',
        email: 'nina.new@lcsb.example.lu',
        oidc_id: 'oidc-nina',
        is_active: true,
        groups: ['auditor'],
        affiliation: 'Luxembourg Centre for Systems Biomedicine',
        api_key: expect.stringMatching(/^[A-Za-z0-9]{48}$/),
      });
      id = res.body.id;
      firstKey = res.body.api_key;
      const [row] = await t.dataSource.query<{ api_key_hash: string }[]>(
        'SELECT api_key_hash FROM users WHERE id = $1',
        [id],
      );
      expect(row.api_key_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(row.api_key_hash).not.toContain(firstKey);
      // An auditor sees every dataset.
      const datasets = await w.get('/api/datasets', firstKey).expect(200);
      expect(datasets.body.items).toHaveLength(DEMO_DATASETS.length);
    });

    it('refuses a taken username (409) and bad fields (400), changing nothing', async () => {
      await refused(
        () =>
          w.post('/api/admin/users', {
            username: 'nina.new',
            first_name: 'N',
            last_name: 'N',
            email: 'n@x.org',
          }),
        409,
      );
      const bad = await refused(
        () =>
          w.post('/api/admin/users', {
            username: 'has space',
            first_name: 1,
            email: 'not-an-email',
            api_key: 'mine',
          }),
        400,
      );
      expect(bad.more.errors).toEqual([
        { field: 'api_key', message: 'unknown field' },
        { field: 'username', message: 'must be letters, digits and . _ @ + -' },
        { field: 'first_name', message: 'must be a string, not a number' },
        { field: 'last_name', message: 'is required' },
        { field: 'email', message: 'must be an email address' },
      ]);
    });

    it('rotation: a new key works at once, the old one stops at once', async () => {
      const res = await w.post(`/api/admin/users/${id}/api-key`, undefined).expect(200);
      expect(Object.keys(res.body)).toEqual(['api_key']);
      expect(res.body.api_key).not.toBe(firstKey);
      await w.get('/api/datasets', res.body.api_key).expect(200);
      const old = await w.get('/api/datasets', firstKey).expect(401);
      expect(old.body.description).toBe('Invalid API key');
    });

    it('rotation of an unknown user is 404; a bad id 400', async () => {
      await refused(() => w.post('/api/admin/users/999999/api-key', undefined), 404);
      const bad = await refused(() => w.post('/api/admin/users/abc/api-key', undefined), 400);
      expect(bad.more.errors).toEqual([{ parameter: 'id', message: 'must be a positive integer' }]);
    });

    it('PATCH deactivates (the key stops working), changes groups and oidc_id', async () => {
      const key = (await w.post(`/api/admin/users/${id}/api-key`, undefined).expect(200)).body
        .api_key as string;
      const res = await w
        .patch(`/api/admin/users/${id}`, {
          is_active: false,
          groups: ['data-steward'],
          oidc_id: null,
        })
        .expect(200);
      expect(res.body).toMatchObject({ is_active: false, groups: ['data-steward'], oidc_id: null });
      await w.get('/api/datasets', key).expect(401);
      await w.patch(`/api/admin/users/${id}`, { is_active: true }).expect(200);
      await w.get('/api/datasets', key).expect(200);
    });

    it('PATCH refuses unknown fields, wrong types and unknown users', async () => {
      const bad = await refused(
        () => w.patch(`/api/admin/users/${id}`, { is_active: 'no', username: 'x' }),
        400,
      );
      expect(bad.more.errors).toEqual([
        { field: 'username', message: 'unknown field' },
        { field: 'is_active', message: 'must be true or false, not a string' },
      ]);
      await refused(() => w.patch('/api/admin/users/999999', { is_active: false }), 404);
    });
  });

  describe('endpoints and exposures', () => {
    let endpointKey: string;
    let exposureId: number;

    it('creates an endpoint with a 64-character key that reads what is exposed to it', async () => {
      const res = await w
        .post('/api/admin/endpoints', {
          name: 'New Catalog',
          url_pattern: 'https://new.example/e/${entity_id}',
        })
        .expect(201);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'New Catalog',
        url_pattern: 'https://new.example/e/${entity_id}',
        api_key: expect.any(String),
      });
      endpointKey = res.body.api_key;
      expect(endpointKey).toHaveLength(64);
      expect((await w.get('/api/datasets', endpointKey).expect(200)).body.items).toEqual([]);
      await refused(
        () =>
          w.post('/api/admin/endpoints', {
            name: 'new catalog',
            url_pattern: 'https://x.example/${entity_id}',
          }),
        409,
      );
      const bad = await refused(
        () => w.post('/api/admin/endpoints', { name: 'Other', url_pattern: 'https://x.example/' }),
        400,
      );
      expect(bad.more.errors).toEqual([
        { field: 'url_pattern', message: 'must be an http(s) URL containing ${entity_id}' },
      ]);
    });

    it('exposes a dataset: 201, visible to the endpoint, its cohorts published; a second active one is 409', async () => {
      const dataset = await accession('datasets', 'title', 'Iron deficiency integrity data');
      await t.dataSource.query(
        `UPDATE cohorts SET is_published = false WHERE name = 'Saarland Metabolic Cohort'`,
      );
      const res = await w
        .post('/api/admin/exposures', {
          dataset,
          endpoint: 'New Catalog',
          form_id: 12,
          request_pdf_enabled: true,
        })
        .expect(201);
      expect(res.body).toMatchObject({
        dataset,
        endpoint: 'New Catalog',
        form_id: 12,
        request_pdf_enabled: true,
        deprecated: false,
      });
      exposureId = res.body.id;
      const seen = await w.get('/api/datasets', endpointKey).expect(200);
      expect(seen.body.items.map((d: { name: string }) => d.name)).toEqual([
        'Iron deficiency integrity data',
      ]);
      expect(seen.body.items[0]).toMatchObject({
        form_id: 12,
        deprecated: false,
        request_pdf_enabled: true,
      });
      const cohorts = (await w.get('/api/cohorts', null).expect(200)).body.results;
      expect(cohorts.map((c: { name: string }) => c.name)).toContain('Saarland Metabolic Cohort');
      // The endpoint named in another case is the same endpoint, so this is the same exposure.
      const again = await refused(
        () => w.post('/api/admin/exposures', { dataset, endpoint: 'NEW CATALOG', form_id: 13 }),
        409,
      );
      expect(again.description).toBe(
        'This dataset already has an active exposure on this endpoint',
      );
    });

    it('two concurrent exposures of the same dataset: one 201, one 409', async () => {
      const dataset = await accession('datasets', 'title', 'Iron deficiency pilot');
      const body = { dataset, endpoint: 'New Catalog', form_id: 5 };
      const results = await Promise.all([
        w.post('/api/admin/exposures', body),
        w.post('/api/admin/exposures', body),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    });

    it('refuses unknown datasets and endpoints (400 naming both)', async () => {
      const bad = await refused(
        () => w.post('/api/admin/exposures', { dataset: 'ELU_I_0', endpoint: 'Nope', form_id: 1 }),
        400,
      );
      expect(bad.more.errors).toEqual([
        { field: 'dataset', message: 'unknown dataset "ELU_I_0"' },
        { field: 'endpoint', message: 'unknown endpoint "Nope"' },
      ]);
    });

    it('withdraws: deprecated with time and reason, kept, still seen as deprecated', async () => {
      await refused(() => w.delete(`/api/admin/exposures/${exposureId}`, {}), 400);
      const res = await w
        .delete(`/api/admin/exposures/${exposureId}`, { reason: 'Consent withdrawn' })
        .expect(200);
      expect(res.body).toMatchObject({
        id: exposureId,
        deprecated: true,
        deprecation_notes: 'Consent withdrawn',
      });
      expect(res.body.deprecation_date).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/);
      const seen = (await w.get('/api/datasets', endpointKey).expect(200)).body.items;
      expect(
        seen.find((d: { name: string }) => d.name === 'Iron deficiency integrity data'),
      ).toMatchObject({
        deprecated: true,
        deprecation_notes: 'Consent withdrawn',
      });
      await refused(() => w.delete(`/api/admin/exposures/${exposureId}`, { reason: 'again' }), 409);
      await refused(() => w.delete('/api/admin/exposures/999999', { reason: 'x' }), 404);
    });
  });

  describe('grants', () => {
    const grant = {
      user: 'roy.blue',
      permission: 'protected',
      object_type: 'project',
      object: 'PD-OMICS',
    };

    it('grants protected: 201, the user then sees the project; again: 200', async () => {
      expect((await w.get('/api/projects', KEYS.unprotected).expect(200)).body.items).toEqual([]);
      const res = await w.post('/api/admin/grants', grant).expect(201);
      expect(res.body).toMatchObject({
        user: 'roy.blue',
        group: null,
        permission: 'protected',
        object_type: 'project',
      });
      const projects = (await w.get('/api/projects', KEYS.unprotected).expect(200)).body.items;
      expect(projects.map((p: { acronym: string }) => p.acronym)).toEqual(['PD-OMICS']);
      await w.post('/api/admin/grants', grant).expect(200);
    });

    it('grants to a group, and refuses bad holders, objects and permissions', async () => {
      const dataset = await accession('datasets', 'title', 'PD-OMICS imaging');
      await w
        .post('/api/admin/grants', {
          group: 'auditor',
          permission: 'protected',
          object_type: 'dataset',
          object: dataset,
        })
        .expect(201);
      const bad = await refused(
        () =>
          w.post('/api/admin/grants', {
            user: 'ghost',
            group: 'auditor',
            permission: 'admin',
            object_type: 'dataset',
            object: 'x',
          }),
        400,
      );
      expect(bad.more.errors).toEqual([
        { field: 'permission', message: 'must be one of: protected' },
      ]);
      const missing = await refused(
        () =>
          w.post('/api/admin/grants', {
            user: 'ghost',
            permission: 'protected',
            object_type: 'contract',
            object: 999999,
          }),
        400,
      );
      expect(missing.more.errors).toEqual([
        { field: 'user', message: 'unknown user "ghost"' },
        { field: 'object', message: 'unknown contract 999999' },
      ]);
    });

    it('revokes: 200, the project disappears from the user key; revoking again is 404', async () => {
      const res = await w.delete('/api/admin/grants', grant).expect(200);
      expect(res.body).toEqual({ status: 'Success', revoked: 1 });
      expect((await w.get('/api/projects', KEYS.unprotected).expect(200)).body.items).toEqual([]);
      await refused(() => w.delete('/api/admin/grants', grant), 404);
    });
  });

  describe('publishing partners and cohorts', () => {
    it('publishes and unpublishes a partner by id or accession; the public list follows', async () => {
      const [{ id, elu_accession: acc }] = await t.dataSource.query<
        { id: number; elu_accession: string }[]
      >(`SELECT id, elu_accession FROM partners WHERE acronym = 'NWG'`);
      const published = await w.post(`/api/admin/partners/${id}/publish`, undefined).expect(200);
      expect(published.body).toMatchObject({
        name: 'Northwind Genomics',
        external_id: acc,
        is_published: true,
      });
      const open = (await w.get('/api/partners', null).expect(200)).body.results;
      expect(open.map((p: { acronym: string }) => p.acronym)).toContain('NWG');
      await w.post(`/api/admin/partners/${acc}/unpublish`, undefined).expect(200);
      const closed = (await w.get('/api/partners', null).expect(200)).body.results;
      expect(closed.map((p: { acronym: string }) => p.acronym)).not.toContain('NWG');
    });

    it('publishes a cohort; unknown ones are 404', async () => {
      const acc = await accession('cohorts', 'name', 'Northwind Volunteers');
      const res = await w.post(`/api/admin/cohorts/${acc}/publish`, undefined).expect(200);
      expect(res.body).toMatchObject({ name: 'Northwind Volunteers', is_published: true });
      const cohorts = (await w.get('/api/cohorts', null).expect(200)).body.results;
      expect(cohorts.map((c: { name: string }) => c.name)).toContain('Northwind Volunteers');
      await refused(() => w.post('/api/admin/cohorts/ELU_I_0/publish', undefined), 404);
    });
  });

  describe('vocabularies', () => {
    const send = (category: string, body: string, type = 'text/plain') =>
      request(t.server)
        .post(`/api/admin/terms/${category}`)
        .set('X-API-Key', TEST_GLOBAL_KEY)
        .set('Content-Type', type)
        .send(body);

    it('loads a TSV body (detected) and an OBO body; term search finds them', async () => {
      const tsv = await send('gene', 'HGNC:99991\tZZTESTGENE1\nHGNC:99992\tZZTESTGENE2\n').expect(
        200,
      );
      expect(tsv.body).toMatchObject({
        status: 'Success',
        category: 'gene',
        format: 'tsv',
        inserted: 2,
      });
      const obo = await send(
        'disease',
        'format-version: 1.2\n\n[Term]\nid: DOID:9999999\nname: zzyzx test disease\n',
      ).expect(200);
      expect(obo.body).toMatchObject({ format: 'obo', inserted: 1 });
      const found = await request(t.server)
        .get('/api/termsearch/disease?search=zzyzx&page=1')
        .expect(200);
      expect(found.body.results.map((r: { term_id: string }) => r.term_id)).toEqual([
        'DOID:9999999',
      ]);
    });

    it('refuses an unknown category (404), a bad file (400), JSON bodies and user keys, changing nothing', async () => {
      await refused(() => send('colour', 'X:1\tred\n'), 404);
      await refused(() => send('gene', 'no tab here\n'), 400);
      await refused(() => send('gene', ''), 400);
      await refused(() => send('gene', '{"a":1}', 'application/json'), 400);
      await refused(
        () =>
          request(t.server)
            .post('/api/admin/terms/gene')
            .set('X-API-Key', KEYS.steward)
            .set('Content-Type', 'text/plain')
            .send('X:1\tx\n'),
        403,
      );
    });
  });

  describe('audit trail', () => {
    it('records who did what to which object; never keys', async () => {
      const res = await w.get('/api/admin/audit?object=user').expect(200);
      const actions = res.body.results.map((e: { action: string }) => e.action);
      expect(actions).toEqual(expect.arrayContaining(['create', 'rotate-key', 'update']));
      const created = res.body.results.find((e: { action: string }) => e.action === 'create');
      expect(created).toMatchObject({
        actor: { kind: 'global', id: null, name: 'global' },
        object_type: 'user',
        change: expect.objectContaining({ username: 'nina.new' }),
      });
      expect(created.at).toMatch(/\+00:00$/);
      const [{ n }] = await t.dataSource.query<{ n: string }[]>(
        `SELECT count(*) AS n FROM audit_log WHERE change::text ~* '(api_key|key_hash)' OR change::text ~ '[0-9a-f]{64}'`,
      );
      expect(Number(n)).toBe(0);
    });

    it('filters by object type and id, and by time; pages', async () => {
      const [{ id }] = await t.dataSource.query<{ id: number }[]>(
        `SELECT id FROM users WHERE username = 'nina.new'`,
      );
      const one = await w.get(`/api/admin/audit?object=user:${id}`).expect(200);
      expect(new Set(one.body.results.map((e: { object_id: string }) => e.object_id))).toEqual(
        new Set([String(id)]),
      );
      const future = await w.get('/api/admin/audit?since=2999-01-01').expect(200);
      expect(future.body).toEqual({ results: [], pagination: { more: false } });
      const page = await w.get('/api/admin/audit?since=2000-01-01T00:00:00Z&page=1').expect(200);
      expect(page.body.results.length).toBeGreaterThan(5);
      const kinds = new Set(page.body.results.map((e: { object_type: string }) => e.object_type));
      // The demo catalog was loaded through the audited services too: its accesses, contract
      // and the entry marking the load complete are on the page with the tests' own changes.
      expect(kinds).toEqual(
        new Set([
          'user',
          'endpoint',
          'exposure',
          'project',
          'dataset',
          'partner',
          'cohort',
          'vocabulary',
          'access',
          'contract',
          'demo',
        ]),
      );
    });

    it.each([
      ['since=yesterday', 'since'],
      // Days and times that do not exist: JavaScript's Date would roll them into March.
      ['since=2026-02-30', 'since'],
      ['since=2026-02-30T00:00:00Z', 'since'],
      ['since=2026-04-31T10:00:00%2B02:00', 'since'],
      ['since=2026-01-01T24:00:00Z', 'since'],
      ['page=0', 'page'],
      ['object=User:1', 'object'],
    ])('?%s is a 400 naming %s', async (query, parameter) => {
      const res = await w.get(`/api/admin/audit?${query}`).expect(400);
      expect(res.body.more.errors[0].parameter).toBe(parameter);
    });
  });

  // Last: the users it creates would show first in the audit trail the tests above read.
  describe('concurrent writes', () => {
    it('30 concurrent creations of one user: one 201, every other one 409, one row', async () => {
      for (const [field, value] of [
        ['username', 'race.user'],
        ['oidc_id', 'race-subject'],
      ] as const) {
        const results = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            w.post('/api/admin/users', {
              username: field === 'username' ? value : `race.${i}`,
              first_name: 'R',
              last_name: 'R',
              email: `race${i}@x.org`,
              ...(field === 'oidc_id' ? { oidc_id: value } : {}),
            }),
          ),
        );
        const statuses = results.map((r) => r.status).sort();
        expect({ field, statuses }).toEqual({
          field,
          statuses: [201, ...Array<number>(29).fill(409)],
        });
        for (const conflict of results.filter((r) => r.status === 409)) {
          expect(conflict.body).toMatchObject({ status: 'Error', more: { field } });
        }
        const rows = await t.dataSource.query<unknown[]>(
          `SELECT id FROM users WHERE ${field} = $1`,
          [value],
        );
        expect(rows).toHaveLength(1);
      }
    });
  });
});
