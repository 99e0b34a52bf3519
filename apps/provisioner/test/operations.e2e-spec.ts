import type { OpenAPIObject } from '@nestjs/swagger';
import { createHmac } from 'node:crypto';
import request from 'supertest';
import { documentedRoutes, registeredRoutes } from '../../../test/support/openapi-routes';
import {
  queueEnv,
  startProvisionerApps,
  TEST_READ_KEY,
  TEST_WRITE_KEY,
  type ProvisionerTestApps,
} from '../../../test/support/provisioner-app';
import { metricSample } from '../../../test/support/prometheus-text';
import {
  dashboardSessionToken,
  SESSION_SECONDS,
} from '../src/queue-dashboard/queue-dashboard-auth.middleware';

let apps: ProvisionerTestApps;
let api: ReturnType<typeof request>;
let worker: ReturnType<typeof request>;

beforeAll(async () => {
  apps = await startProvisionerApps(await queueEnv());
  api = request(apps.api.getHttpServer());
  worker = request(apps.worker.getHttpServer());
});

afterAll(async () => {
  await apps.close();
});

describe('GET /metrics', () => {
  it('counts the API requests by route template and status and reports the queue depth', async () => {
    await api.get('/imports').set('X-API-Key', TEST_READ_KEY).expect(200);
    await api.get('/imports').set('X-API-Key', TEST_READ_KEY).expect(200);
    await api.get('/imports').expect(401);
    await api
      .get('/imports/dropzone-dataset-nothing-here')
      .set('X-API-Key', TEST_READ_KEY)
      .expect(404);

    const response = await api.get('/metrics').expect(200);
    expect(response.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = response.text;
    const base = { app: 'provisioner-api', method: 'GET' };
    expect(
      metricSample(text, 'http_requests_total', { ...base, route: '/imports', status: '200' }),
    ).toBe(2);
    expect(
      metricSample(text, 'http_requests_total', { ...base, route: '/imports', status: '401' }),
    ).toBe(1);
    expect(
      metricSample(text, 'http_requests_total', { ...base, route: '/imports/:id', status: '404' }),
    ).toBe(1);
    expect(
      metricSample(text, 'http_request_duration_seconds_count', {
        ...base,
        route: '/imports',
        status: '200',
      }),
    ).toBe(2);
    expect(text).not.toContain('nothing-here');
    expect(metricSample(text, 'provisioner_queue_up', { queue: 'imports' })).toBe(1);
    for (const state of ['waiting', 'active', 'delayed', 'failed', 'completed']) {
      expect(metricSample(text, 'provisioner_queue_jobs', { queue: 'imports', state })).toEqual(
        expect.any(Number),
      );
    }
  });

  it("serves the worker's import metrics on its health port, open like /health", async () => {
    await worker.get('/health/live').expect(200);
    const text = (await worker.get('/metrics').expect(200)).text;
    for (const outcome of ['imported', 'failed', 'rejected']) {
      expect(
        metricSample(text, 'provisioner_imports_total', { app: 'provisioner-worker', outcome }),
      ).toBe(0);
    }
    for (const name of [
      'provisioner_import_bytes_total',
      'provisioner_import_files_total',
      'provisioner_import_duration_seconds',
      'http_requests_total',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    expect(
      metricSample(text, 'http_requests_total', { route: '/health/live', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
  });
});

describe('queue dashboard at /admin/queues', () => {
  it('refuses requests without a key, with an invalid key and with a read key, in the envelope', async () => {
    const none = await api.get('/admin/queues').expect(401);
    expect(none.body).toEqual({ status: 'Error', description: 'API key required', more: {} });
    expect(none.headers['www-authenticate']).toBe('ApiKey');
    const invalid = await api.get('/admin/queues').set('X-API-Key', 'not-a-key').expect(401);
    expect(invalid.body.description).toBe('Invalid API key');
    const read = await api.get('/admin/queues').query({ API_KEY: TEST_READ_KEY }).expect(403);
    expect(read.body).toEqual({
      status: 'Error',
      description: 'The queue dashboard requires the provisioner write key',
      more: {},
    });
    expect(read.headers['set-cookie']).toBeUndefined();
  });

  it('guards every sub-path: the JSON API and the static assets', async () => {
    await api.get('/admin/queues/api/queues').expect(401);
    await api.get('/admin/queues/api/queues').set('X-API-Key', TEST_READ_KEY).expect(403);
    await api.get('/admin/queues/static/js/main.js').expect(401);
    await api.put('/admin/queues/api/queues/imports/retry/failed').expect(401);
  });

  it('serves the dashboard with the write key, and its scripts and data with the session cookie', async () => {
    const page = await api.get('/admin/queues').query({ API_KEY: TEST_WRITE_KEY }).expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const [cookie] = page.headers['set-cookie'] as unknown as string[];
    expect(cookie).toMatch(
      /^queue_dashboard=\d+\.[A-Za-z0-9_-]{43}; Path=\/admin\/queues; Max-Age=28800; HttpOnly; SameSite=Strict/,
    );
    const session = cookie.split(';')[0];

    // Asset paths are relative to <base href="/admin/queues/">.
    expect(page.text).toContain('<base href="/admin/queues/" />');
    const script = `/admin/queues/${/src="(static\/[^"]+\.js)"/.exec(page.text)?.[1]}`;
    await api.get(script).expect(401);
    const asset = await api.get(script).set('Cookie', session).expect(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);

    const queues = await api.get('/admin/queues/api/queues').set('Cookie', session).expect(200);
    expect((queues.body as { queues: { name: string }[] }).queues.map((q) => q.name)).toEqual([
      'imports',
      'catalog-registration',
    ]);

    await api.get('/admin/queues/api/queues').set('Cookie', 'queue_dashboard=forged').expect(401);
  });

  describe('the session cookie expires and cannot be tampered with', () => {
    const now = () => Math.floor(Date.now() / 1000);
    const withSession = (token: string) =>
      api.get('/admin/queues/api/queues').set('Cookie', `queue_dashboard=${token}`);

    it('carries its own issue time: the cookie set now is signed for now', async () => {
      const before = now();
      const page = await api.get('/admin/queues').set('X-API-Key', TEST_WRITE_KEY).expect(200);
      const [cookie] = page.headers['set-cookie'] as unknown as string[];
      const issuedAt = Number(/^queue_dashboard=(\d+)\./.exec(cookie)?.[1]);
      expect(issuedAt).toBeGreaterThanOrEqual(before);
      expect(issuedAt).toBeLessThanOrEqual(now());
      expect(cookie.split(';')[0]).toBe(
        `queue_dashboard=${dashboardSessionToken(TEST_WRITE_KEY, issuedAt)}`,
      );
    });

    it('is accepted until SESSION_SECONDS after its issue time, then refused', async () => {
      await withSession(
        dashboardSessionToken(TEST_WRITE_KEY, now() - SESSION_SECONDS + 120),
      ).expect(200);
      const expired = await withSession(
        dashboardSessionToken(TEST_WRITE_KEY, now() - SESSION_SECONDS - 1),
      ).expect(401);
      expect(expired.body.description).toBe('Queue dashboard session expired');
    });

    it('refuses a session of the old kind: the same HMAC of the write key for ever', async () => {
      const forever = createHmac('sha256', TEST_WRITE_KEY)
        .update('queue-dashboard-session')
        .digest('base64url');
      await withSession(forever).expect(401);
    });

    it('refuses a moved issue time, a changed signature, another key and a time in the future', async () => {
      const issued = now() - SESSION_SECONDS - 100;
      const [, mac] = dashboardSessionToken(TEST_WRITE_KEY, issued).split('.');
      await withSession(`${now()}.${mac}`).expect(401);
      const fresh = dashboardSessionToken(TEST_WRITE_KEY, now());
      const flipped = fresh.slice(0, -1) + (fresh.endsWith('A') ? 'B' : 'A');
      await withSession(flipped).expect(401);
      await withSession(
        dashboardSessionToken('another-write-key-0123456789abcdef0123', now()),
      ).expect(401);
      await withSession(dashboardSessionToken(TEST_WRITE_KEY, now() + 3600)).expect(401);
    });
  });
});

describe('OpenAPI document', () => {
  it('is served openly at /docs-json, with the key schemes and the error envelope', async () => {
    const document = (await api.get('/docs-json').expect(200)).body as OpenAPIObject;
    expect(document.openapi).toMatch(/^3\./);
    expect(document.components?.securitySchemes).toEqual({
      ApiKeyHeader: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
      ApiKeyQuery: expect.objectContaining({ type: 'apiKey', in: 'query', name: 'API_KEY' }),
    });
    expect(document.components?.schemas?.ErrorEnvelope).toMatchObject({
      required: ['status', 'description', 'more'],
    });
    expect(document.paths['/health/live'].get?.security).toEqual([]);
    expect(document.paths['/imports'].get?.security).toEqual([
      { ApiKeyHeader: [] },
      { ApiKeyQuery: [] },
    ]);
    expect(document.paths['/imports'].get?.responses['401']).toEqual({
      $ref: '#/components/responses/Error401',
    });
    const ui = await api.get('/docs').expect(200);
    expect(ui.headers['content-type']).toMatch(/^text\/html/);
  });

  it('documents exactly the routes the app registers', async () => {
    const document = (await api.get('/docs-json').expect(200)).body as OpenAPIObject;
    const registered = registeredRoutes(apps.api, /^\/docs(-json|-yaml)?(\/|$)/);
    expect(registered).toEqual(
      expect.arrayContaining(['GET /imports', 'GET /metrics', 'GET /health/ready']),
    );
    expect(documentedRoutes(document)).toEqual(registered);
  });
});
