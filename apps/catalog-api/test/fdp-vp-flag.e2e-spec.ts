import { Parser } from 'n3';
import request from 'supertest';
import {
  CatalogTestApp,
  startCatalogApp,
  TEST_GLOBAL_KEY,
} from '../../../test/support/catalog-app';
import { runCli } from '../src/cli/run-cli';
import { loadDemoData } from '../src/demo/demo-data-loader';
import { expectRefusedUnchanged } from './catalog-writes.fixture';
import { DEMO_KEYS, KEYS } from './demo-catalog.fixture';
import { DCAT_TEST_ENV } from './support/dcat-test-env';

/**
 * A dataset's own EJP RD Virtual Platform flag (issue 58, item 3): set by the admin API (global
 * key only) and the CLI, recorded in the audit trail, and shown as
 * `ejp:vpConnection ejp:VPDiscoverable` in the dataset's FDP record, while the catalog-wide
 * FDP_VP_DISCOVERABLE is off.
 */
const VP_CONNECTION = 'https://w3id.org/ejp-rd/vocabulary#vpConnection';
const VP_DISCOVERABLE = 'https://w3id.org/ejp-rd/vocabulary#VPDiscoverable';
/** CATALOG_SOURCE of the test app (test/support/catalog-app.ts). */
const BASE = 'https://catalog.test';

describe('per-dataset VP flag (PUT /api/admin/datasets/{dataset}/vp-discoverable, CLI vp-discoverable)', () => {
  let t: CatalogTestApp;
  let tagged: string;
  let other: string;

  beforeAll(async () => {
    t = await startCatalogApp({ ...DCAT_TEST_ENV, FDP_VP_DISCOVERABLE: 'false' });
    await loadDemoData(t.app, DEMO_KEYS);
    // Two published datasets (an active exposure each): what an anonymous crawler sees.
    const rows = await t.dataSource.query<{ elu_accession: string }[]>(
      `SELECT d.elu_accession FROM datasets d WHERE EXISTS (SELECT 1 FROM exposures e
         WHERE e.dataset_id = d.id AND e.deprecated_at IS NULL) ORDER BY d.id LIMIT 2`,
    );
    [tagged, other] = rows.map((r) => r.elu_accession);
    await t.versionSettled();
  });
  afterAll(() => t.close());

  const put = (dataset: string, body: unknown, key: string | null = TEST_GLOBAL_KEY) => {
    const req = request(t.server).put(`/api/admin/datasets/${dataset}/vp-discoverable`);
    return (key === null ? req : req.set('X-API-Key', key)).send(body as object);
  };

  /** Whether the dataset's FDP record, read anonymously in Turtle, carries the VP tag. */
  async function taggedInFdp(accession: string): Promise<boolean> {
    const res = await request(t.server)
      .get(`/fdp/dataset/${accession}`)
      .set('Accept', 'text/turtle')
      .expect(200);
    const subject = `${BASE}/fdp/dataset/${accession}`;
    return new Parser({ baseIRI: subject })
      .parse(res.text)
      .some(
        (q) =>
          q.subject.value === subject &&
          q.predicate.value === VP_CONNECTION &&
          q.object.value === VP_DISCOVERABLE,
      );
  }

  it('a user key and an endpoint key are refused 403, no key 401; nothing changes', async () => {
    await expectRefusedUnchanged(
      t.dataSource,
      () => put(tagged, { discoverable: true }, KEYS.steward),
      403,
    );
    await expectRefusedUnchanged(
      t.dataSource,
      () => put(tagged, { discoverable: true }, KEYS.catalogEndpoint),
      403,
    );
    await expectRefusedUnchanged(
      t.dataSource,
      () => put(tagged, { discoverable: true }, null),
      401,
    );
  });

  it('refuses a body without a boolean (400) and an unknown dataset (404); nothing changes', async () => {
    for (const body of [{}, { discoverable: 'yes' }, { discoverable: null }]) {
      const res = await expectRefusedUnchanged(t.dataSource, () => put(tagged, body), 400);
      expect(JSON.stringify(res.body)).toContain('discoverable');
    }
    await expectRefusedUnchanged(
      t.dataSource,
      () => put('ELU_I_999999', { discoverable: true }),
      404,
    );
  });

  it('the global key tags one dataset: its FDP record says ejp:VPDiscoverable, the others do not; audited', async () => {
    expect(await taggedInFdp(tagged)).toBe(false);
    const res = await put(tagged, { discoverable: true }).expect(200);
    expect(res.body).toEqual({ accession: tagged, vp_discoverable: true });
    await t.versionSettled();
    expect(await taggedInFdp(tagged)).toBe(true);
    expect(await taggedInFdp(other)).toBe(false);
    // Not the root nor the catalog: those follow FDP_VP_DISCOVERABLE only.
    const catalog = await request(t.server).get('/fdp/catalog').expect(200);
    expect(catalog.text).not.toContain('VPDiscoverable');
    const audit = await t.dataSource.query<
      { action: string; change: unknown; actor_kind: string }[]
    >(
      `SELECT action, change, actor_kind FROM audit_log
       WHERE object_type = 'dataset' AND action = 'set-vp-discoverable' AND object_id = (SELECT id::text FROM datasets WHERE elu_accession = $1)`,
      [tagged],
    );
    expect(audit).toEqual([
      { action: 'set-vp-discoverable', change: { vp_discoverable: true }, actor_kind: 'global' },
    ]);
    // Untagged again.
    await put(tagged, { discoverable: false }).expect(200);
    await t.versionSettled();
    expect(await taggedInFdp(tagged)).toBe(false);
  });

  it('the CLI sets and clears it (`npm run catalog -- vp-discoverable <dataset> true|false`)', async () => {
    let out = '';
    const cli = (...argv: string[]) =>
      runCli(
        argv,
        { DATABASE_URL: t.databaseUrl, CATALOG_CLI_USER: 'tester' },
        { out: (s) => (out = s), err: () => undefined, cwd: process.cwd() },
      );
    expect(await cli('vp-discoverable', other, 'true')).toBe(0);
    expect(JSON.parse(out)).toEqual({ accession: other, vp_discoverable: true });
    await t.versionSettled();
    expect(await taggedInFdp(other)).toBe(true);
    expect(await cli('vp-discoverable', other, 'yes')).toBe(1);
    expect(await cli('vp-discoverable', 'ELU_I_999999', 'true')).not.toBe(0);
    expect(await cli('vp-discoverable', other, 'false')).toBe(0);
    await t.versionSettled();
    expect(await taggedInFdp(other)).toBe(false);
    const actors = await t.dataSource.query<{ actor_kind: string; actor_name: string }[]>(
      `SELECT actor_kind, actor_name FROM audit_log WHERE action = 'set-vp-discoverable'
         AND object_id = (SELECT id::text FROM datasets WHERE elu_accession = $1)`,
      [other],
    );
    expect(actors).toHaveLength(2);
  });
});
