import { behindPooler, poolerRequested } from './test-services';

describe('TEST_PGBOUNCER: which test files reach their databases through the run pooler', () => {
  it('reads on, catalog and off, and refuses anything else', () => {
    expect(poolerRequested({ TEST_PGBOUNCER: 'on' })).toBe('all');
    expect(poolerRequested({ TEST_PGBOUNCER: 'TRUE' })).toBe('all');
    expect(poolerRequested({ TEST_PGBOUNCER: 'catalog' })).toBe('catalog');
    expect(poolerRequested({ TEST_PGBOUNCER: 'off' })).toBeUndefined();
    expect(poolerRequested({})).toBeUndefined();
    expect(() => poolerRequested({ TEST_PGBOUNCER: 'catlog' })).toThrow(/on, catalog or off/);
  });

  const catalogFile = '/repo/apps/catalog-api/test/catalog-imports.e2e-spec.ts';
  const bothAppsFile = '/repo/test/e2e/drs.e2e-spec.ts';
  const pooler = 'postgres://postgres@127.0.0.1:6432';

  it('=on: every file; =catalog: the catalog end-to-end files only; no pooler: none', () => {
    const all = { poolerServerUrl: pooler, poolerScope: 'all' as const };
    const catalog = { poolerServerUrl: pooler, poolerScope: 'catalog' as const };
    expect([catalogFile, bothAppsFile].map((f) => behindPooler(all, f))).toEqual([true, true]);
    expect([catalogFile, bothAppsFile].map((f) => behindPooler(catalog, f))).toEqual([true, false]);
    expect(behindPooler(catalog, undefined)).toBe(false);
    expect(behindPooler({ poolerServerUrl: '', poolerScope: 'all' }, catalogFile)).toBe(false);
  });
});
