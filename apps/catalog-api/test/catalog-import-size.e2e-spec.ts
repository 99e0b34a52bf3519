import { CatalogTestApp, startCatalogApp } from '../../../test/support/catalog-app';
import { writer } from './catalog-writes.fixture';

/**
 * More records in one document than PostgreSQL takes bind parameters for in one statement
 * (65,535; the audit entries of 9,363 records, seven values each, were one statement).
 */
const RECORDS = 12_000;
const GENERAL_LIMIT = 64 * 1024;

describe('catalog imports: documents larger than one statement can carry', () => {
  let t: CatalogTestApp;
  let w: ReturnType<typeof writer>;
  beforeAll(async () => {
    // Every other route keeps the general limit; the imports take MAX_IMPORT_BODY_BYTES.
    t = await startCatalogApp({ MAX_BODY_BYTES: String(GENERAL_LIMIT) });
    w = writer(t.server);
  });
  afterAll(() => t.close());

  const partners = (suffix: string) => ({
    items: Array.from({ length: RECORDS }, (_, i) => ({
      name: `Bulk Partner ${i}`,
      acronym: `BP${i}`,
      external_id: `BULK_${i}`,
      address: `Street ${i}${suffix}`,
    })),
  });

  async function count(sql: string): Promise<number> {
    const [row] = await t.dataSource.query<{ n: string }[]>(sql);
    return Number(row.n);
  }

  it(`imports ${RECORDS} records in one document, then updates them all, with an audit entry each`, async () => {
    const created = await w.post('/api/partners', partners('')).expect(200);
    expect(created.body).toEqual({ status: 'Success', created: RECORDS, updated: 0 });
    expect(await count(`SELECT count(*) AS n FROM partners WHERE name LIKE 'Bulk Partner %'`)).toBe(
      RECORDS,
    );

    const updated = await w.post('/api/partners', partners(', 2nd floor')).expect(200);
    expect(updated.body).toEqual({ status: 'Success', created: 0, updated: RECORDS });
    expect(
      await count(`SELECT count(*) AS n FROM partners WHERE address LIKE '%, 2nd floor'`),
    ).toBe(RECORDS);
    expect(
      await count(
        `SELECT count(*) AS n FROM audit_log WHERE object_type = 'partner' AND action = 'update'`,
      ),
    ).toBe(RECORDS);
  }, 120_000);

  it('takes import documents over the general body limit, and nothing else', async () => {
    const document = partners(', 3rd floor');
    expect(JSON.stringify(document).length).toBeGreaterThan(GENERAL_LIMIT);
    await w.post('/api/PARTNERS', document).expect(200);
    const other = await w
      .post('/api/admin/users', { username: 'x'.repeat(GENERAL_LIMIT) })
      .expect(413);
    expect(other.body.status).toBe('Error');
    // Another method on an import path is refused before its body is read: 405, never parsed.
    await w.patch('/api/partners', document).expect(405);
  }, 120_000);
});

/**
 * Documents whose every record is wrong: the answer lists the first MAX_REPORTED_PROBLEMS
 * problems and counts the rest, so its size does not grow with the document.
 */
describe('catalog imports: documents with a problem in every record', () => {
  const LISTED = 1000;
  let t: CatalogTestApp;
  let w: ReturnType<typeof writer>;
  beforeAll(async () => {
    t = await startCatalogApp();
    w = writer(t.server);
  });
  afterAll(() => t.close());

  const post = (path: string, text: string) =>
    w.post(path, undefined).set('Content-Type', 'application/json').send(text);

  it.each([
    ['200,000 partners of one name', '/api/partners', 200_000, '{"name":"Twin"}', 199_999],
    [
      '200,000 datasets of one external id',
      '/api/datasets',
      200_000,
      '{"name":"D","external_id":"X"}',
      0,
    ],
    ['500,000 empty partners', '/api/partners', 500_000, '{}', 500_000],
  ])(
    '%s: a 400 listing 1,000 problems and counting all',
    async (_what, path, n, item, atLeast) => {
      const res = await post(path, `{"items":[${Array<string>(n).fill(item).join()}]}`);
      expect(res.status).toBe(400);
      expect(res.body.more.errors).toHaveLength(LISTED);
      expect(res.body.more.error_count).toBeGreaterThanOrEqual(Math.max(atLeast, LISTED + 1));
      expect(res.body.description).toBe(`Invalid input: ${res.body.more.error_count} problems`);
      expect(res.text.length).toBeLessThan(200_000);
      const [{ n: written }] = await t.dataSource.query<{ n: string }[]>(
        'SELECT (SELECT count(*) FROM partners) + (SELECT count(*) FROM datasets) AS n',
      );
      expect(Number(written)).toBe(0);
    },
    120_000,
  );

  it('refuses a document of more arrays and objects than MAX_JSON_OBJECTS before parsing it', async () => {
    const res = await post(
      '/api/partners',
      `{"items":[${Array<string>(1_000_000).fill('{}').join()}]}`,
    );
    expect(res.status).toBe(400);
    expect(res.body.more).toEqual({ max_objects: 1_000_000 });
  });
});
