import type { OpenAPIObject } from '@nestjs/swagger';
import request from 'supertest';
import {
  startCatalogApp,
  TEST_GLOBAL_KEY,
  type CatalogTestApp,
} from '../../../test/support/catalog-app';
import { documentedRoutes, registeredRoutes } from '../../../test/support/openapi-routes';
import { metricSample } from '../../../test/support/prometheus-text';

let t: CatalogTestApp;
let http: ReturnType<typeof request>;

beforeAll(async () => {
  t = await startCatalogApp();
  http = request(t.server);
});

afterAll(async () => {
  await t.close();
});

describe('GET /metrics', () => {
  it('counts requests by route template and status, errors and refused bodies included', async () => {
    await http.get('/api/cohorts').expect(200);
    await http.get('/api/cohorts').expect(200);
    await http.get('/api/termsearch/disease').query({ search: 'x', page: '1' }).expect(200);
    await http.get('/api/termsearch/phenotype').query({ search: 'x', page: '1' }).expect(200);
    await http.get('/api/projects').expect(401);
    await http.get('/api/no-such-thing/42').expect(404);
    // Bodies are looked at only once the key passed.
    await http
      .post('/api/partners')
      .set('X-API-Key', TEST_GLOBAL_KEY)
      .set('Content-Type', 'text/xml')
      .send('<x/>')
      .expect(415);

    const response = await http.get('/metrics').expect(200);
    expect(response.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = response.text;
    const get = { app: 'catalog-api', method: 'GET' };
    expect(
      metricSample(text, 'http_requests_total', { ...get, route: '/api/cohorts', status: '200' }),
    ).toBe(2);
    expect(
      metricSample(text, 'http_requests_total', {
        ...get,
        route: '/api/termsearch/:category',
        status: '200',
      }),
    ).toBe(2);
    expect(
      metricSample(text, 'http_requests_total', { ...get, route: '/api/projects', status: '401' }),
    ).toBe(1);
    expect(
      metricSample(text, 'http_requests_total', { ...get, route: '<unmatched>', status: '404' }),
    ).toBe(1);
    expect(metricSample(text, 'http_requests_total', { method: 'POST', status: '415' })).toBe(1);
    expect(
      metricSample(text, 'http_request_duration_seconds_bucket', {
        ...get,
        route: '/api/cohorts',
        le: '+Inf',
      }),
    ).toBe(2);
    // Raw paths never become label values (one series per record would follow).
    expect(text).not.toContain('/api/termsearch/disease');
    expect(text).not.toContain('no-such-thing');
    expect(text).toContain('# TYPE nodejs_eventloop_lag_seconds gauge');
  });
});

describe('OpenAPI document', () => {
  it('is served openly at /api/docs-json and /api/docs, with the key schemes and the error envelope', async () => {
    const document = (await http.get('/api/docs-json').expect(200)).body as OpenAPIObject;
    expect(document.info.title).toBe('Catalog API');
    expect(document.components?.securitySchemes).toEqual({
      ApiKeyHeader: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
      ApiKeyQuery: expect.objectContaining({ type: 'apiKey', in: 'query', name: 'API_KEY' }),
      // GET /api/users also takes an identity-provider token (@AllowBearer).
      IdpBearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    expect(document.components?.schemas?.ErrorEnvelope).toMatchObject({
      required: ['status', 'description', 'more'],
    });
    expect(document.components?.responses?.Error500).toBeDefined();
    // Public, optional-key and key-only routes are told apart from the same metadata the guard reads.
    expect(document.paths['/api/cohorts'].get?.security).toEqual([]);
    expect(document.paths['/api/projects'].get?.security).toEqual([
      { ApiKeyHeader: [] },
      { ApiKeyQuery: [] },
    ]);
    expect(document.paths['/api/projects'].get?.responses['401']).toEqual({
      $ref: '#/components/responses/Error401',
    });
    const ui = await http.get('/api/docs').expect(200);
    expect(ui.headers['content-type']).toMatch(/^text\/html/);
  });

  it('documents exactly the routes the app registers', async () => {
    const document = (await http.get('/api/docs-json').expect(200)).body as OpenAPIObject;
    // GET / only links to the docs, as /api/docs serves them: neither is an API route.
    const registered = registeredRoutes(t.app, /^\/$|^\/api\/docs(-json|-yaml)?(\/|$)/);
    expect(registered).toEqual(
      expect.arrayContaining([
        'GET /api/cohorts',
        'GET /api/termsearch/{category}',
        'GET /metrics',
        'GET /health/live',
      ]),
    );
    expect(documentedRoutes(document)).toEqual(registered);
  });
});
