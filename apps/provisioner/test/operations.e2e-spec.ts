import { Logger } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';
import { Queue } from 'bullmq';
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
import { IMPORTS_QUEUE } from '../src/imports/import.queue';
import { STORAGE_REGISTRATION_QUEUE } from '../src/storage-registration/storage-registration.queue';
import {
  dashboardSessionToken,
  LOGIN_BODY_MAX_BYTES,
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
    for (const queue of ['imports', 'catalog-registration', 'catalog-trail'])
      for (const state of ['waiting', 'active', 'delayed', 'failed', 'completed']) {
        expect(metricSample(text, 'provisioner_queue_jobs', { queue, state })).toEqual(
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
      'provisioner_import_step_seconds',
      'http_requests_total',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    expect(
      metricSample(text, 'http_requests_total', { route: '/health/live', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
  });
});

describe("queues' connection errors", () => {
  it('are logged as warnings for every queue either process opens, never printed raw', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    const raw = jest.spyOn(console, 'error');
    try {
      for (const app of [apps.api, apps.worker]) {
        const queues = app
          .get(DiscoveryService)
          .getProviders()
          .flatMap(({ instance }) => (instance instanceof Queue ? [instance] : []));
        // The imports queue and the registrations' (the dashboard's, the metrics', the outbox's).
        expect(queues.map((queue) => queue.name)).toEqual(
          expect.arrayContaining([IMPORTS_QUEUE, STORAGE_REGISTRATION_QUEUE]),
        );
        for (const queue of queues) {
          warn.mockClear();
          // What the backend emits when a connection drops (PostgreSQL's failover: 57P01).
          queue.emit(
            'error',
            Object.assign(new Error('terminating connection'), { code: '57P01' }),
          );
          expect(warn).toHaveBeenCalledWith(
            expect.objectContaining({ err: expect.objectContaining({ code: '57P01' }) }),
            `queue ${queue.name}: connection error; reconnecting`,
          );
        }
      }
      expect(raw).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
      raw.mockRestore();
    }
  });
});

describe('queue dashboard at /admin/queues', () => {
  it('refuses requests without a key, with an invalid key and with a read key, in the envelope', async () => {
    const none = await api.get('/admin/queues').expect(401);
    expect(none.body).toEqual({ status: 'Error', description: 'API key required', more: {} });
    expect(none.headers['www-authenticate']).toBe('ApiKey');
    const invalid = await api.get('/admin/queues').set('X-API-Key', 'not-a-key').expect(401);
    expect(invalid.body.description).toBe('Invalid API key');
    const read = await api.get('/admin/queues').set('X-API-Key', TEST_READ_KEY).expect(403);
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
    const page = await api.get('/admin/queues').set('X-API-Key', TEST_WRITE_KEY).expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['x-powered-by']).toBeUndefined();
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
      'catalog-trail',
    ]);

    await api.get('/admin/queues/api/queues').set('Cookie', 'queue_dashboard=forged').expect(401);
  });

  describe('signing in: a login form or a header, never a key in the URL', () => {
    const sessionOf = (res: { headers: Record<string, unknown> }) =>
      ((res.headers['set-cookie'] as string[] | undefined) ?? [])
        .find((c) => c.startsWith('queue_dashboard='))
        ?.split(';')[0];
    const form = (body: string) =>
      api.post('/admin/queues/login').type('application/x-www-form-urlencoded').send(body);

    it('refuses a key in the query string on every dashboard path, without a cookie, whatever else comes with it', async () => {
      const session = `queue_dashboard=${dashboardSessionToken(TEST_WRITE_KEY, Math.floor(Date.now() / 1000))}`;
      for (const path of [
        `/admin/queues?API_KEY=${TEST_WRITE_KEY}`,
        `/admin/queues/api/queues?api_key=${TEST_WRITE_KEY}`,
        `/admin/queues/login?API%5FKEY=${TEST_WRITE_KEY}`,
      ]) {
        const res = await api.get(path).set('Cookie', session).expect(400);
        expect(res.body.description).toMatch(/never takes a key in the URL/);
        expect(res.headers['set-cookie']).toBeUndefined();
      }
      await api.post(`/admin/queues/login?API_KEY=${TEST_WRITE_KEY}`).expect(400);
    });

    it('sends a browser without a session to the login form, which posts the key in its body', async () => {
      const redirect = await api.get('/admin/queues').set('Accept', 'text/html').expect(303);
      expect(redirect.headers.location).toBe('/admin/queues/login');
      const page = await api.get('/admin/queues/login').expect(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(page.text).toContain('<form method="post" action="/admin/queues/login">');
      expect(page.text).toContain('name="api_key" type="password"');
      const expired = dashboardSessionToken(
        TEST_WRITE_KEY,
        Math.floor(Date.now() / 1000) - SESSION_SECONDS - 1,
      );
      const again = await api
        .get('/admin/queues')
        .set('Accept', 'text/html')
        .set('Cookie', `queue_dashboard=${expired}`)
        .expect(303);
      expect(again.headers.location).toBe('/admin/queues/login?expired=1');
      expect((await api.get('/admin/queues/login?expired=1').expect(200)).text).toContain(
        'The session expired',
      );
    });

    it('signs in with the write key posted by the form: a session cookie and the dashboard', async () => {
      const res = await form(`api_key=${encodeURIComponent(TEST_WRITE_KEY)}`).expect(303);
      expect(res.headers.location).toBe('/admin/queues/');
      const session = sessionOf(res);
      expect(session).toMatch(/^queue_dashboard=\d+\.[A-Za-z0-9_-]{43}$/);
      expect((res.headers['set-cookie'] as unknown as string[])[0]).toMatch(
        /; Path=\/admin\/queues; Max-Age=28800; HttpOnly; SameSite=Strict/,
      );
      await api.get('/admin/queues/api/queues').set('Cookie', session!).expect(200);
    });

    it('signs in a script sending the header: 204 and the cookie', async () => {
      const res = await api
        .post('/admin/queues/login')
        .set('X-API-Key', TEST_WRITE_KEY)
        .expect(204);
      await api.get('/admin/queues/api/queues').set('Cookie', sessionOf(res)!).expect(200);
    });

    it('refuses a read key, a wrong or missing key, another body type and an oversized body, setting no cookie', async () => {
      const cases = [
        [
          form(`api_key=${TEST_READ_KEY}`),
          403,
          'The queue dashboard requires the provisioner write key',
        ],
        [form('api_key=not-the-key'), 401, 'Invalid API key'],
        [form('api_key='), 401, 'API key required'],
        [form('other=1'), 401, 'API key required'],
        [
          api.post('/admin/queues/login').send({ api_key: TEST_WRITE_KEY }),
          415,
          'Request body must be application/x-www-form-urlencoded',
        ],
        [form(`api_key=${'k'.repeat(LOGIN_BODY_MAX_BYTES)}`), 413, 'Request body too large'],
      ] as const;
      for (const [sent, status, description] of cases) {
        const res = await sent;
        expect({ status: res.status, description: res.body.description }).toEqual({
          status,
          description,
        });
        expect(res.headers['set-cookie']).toBeUndefined();
      }
      await api.put('/admin/queues/login').expect(405);
    });

    it('signs out: the cookie is cleared and the browser sent to the login form', async () => {
      const res = await api.post('/admin/queues/logout').expect(303);
      expect(res.headers.location).toBe('/admin/queues/login');
      expect((res.headers['set-cookie'] as unknown as string[])[0]).toMatch(
        /^queue_dashboard=; Path=\/admin\/queues; Max-Age=0; HttpOnly/,
      );
      await api.get('/admin/queues/logout').expect(405);
    });
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
    // Access URLs (/drs-bytes/<token>/…) are handed out by DRS, not an API to call: undocumented;
    // GET / only links to the docs.
    const registered = registeredRoutes(apps.api, /^\/$|^\/(docs(-json|-yaml)?|drs-bytes)(\/|$)/);
    expect(registered).toEqual(
      expect.arrayContaining(['GET /imports', 'GET /metrics', 'GET /health/ready']),
    );
    expect(documentedRoutes(document)).toEqual(registered);
  });
});
