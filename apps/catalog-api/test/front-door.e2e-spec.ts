import { answerWithoutBody, portOf } from '../../../test/support/incomplete-body';
import { CatalogTestApp, startCatalogApp } from '../../../test/support/catalog-app';
import { writeRoutes } from '../../../test/support/write-routes';
import { ACCESS_REQUEST_PATHS } from '../src/access-requests/access-request.gate';

describe('catalog-api front door', () => {
  let t: CatalogTestApp;
  let port: number;

  beforeAll(async () => {
    t = await startCatalogApp();
    port = await portOf(t.server);
  });
  afterAll(() => t.close());

  it('refuses every route that takes a body before reading it, without a key or with a wrong one', async () => {
    const routes = writeRoutes(t.app);
    expect(routes.length).toBeGreaterThanOrEqual(10);
    const seen: { route: string; key: string; status: number }[] = [];
    const expected: typeof seen = [];
    for (const { method, path } of routes) {
      // The webhook takes no key: its own gate (integration off here) refuses it first.
      const status = ACCESS_REQUEST_PATHS.test(path) ? 403 : 401;
      for (const [key, headers] of [
        ['none', {}],
        ['wrong', { 'X-API-Key': 'not-a-key-of-this-catalog' }],
      ] as const) {
        const res = await answerWithoutBody(port, { method, path, headers });
        seen.push({ route: `${method} ${path}`, key, status: res.status });
        expected.push({ route: `${method} ${path}`, key, status });
      }
    }
    expect(seen).toEqual(expected);
  });
});
