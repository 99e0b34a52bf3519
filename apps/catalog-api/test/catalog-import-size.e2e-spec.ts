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
