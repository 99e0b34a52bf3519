import type { NestExpressApplication } from '@nestjs/platform-express';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { answerWithoutBody, portOf } from '../../../test/support/incomplete-body';
import {
  provisionerTestSettings,
  queueEnv,
  TEST_READ_KEY,
  TEST_WRITE_KEY,
} from '../../../test/support/provisioner-app';
import { writeRoutes } from '../../../test/support/write-routes';
import { createProvisionerApiApp } from '../src/http-app';
import { APP_START_MS } from '../../../test/support/timeouts';

/** The queue dashboard's own JSON API takes bodies too (bull-board's routes, below its mount). */
const DASHBOARD_WRITES = [
  { method: 'POST', path: '/admin/queues/api/queues/imports/add' },
  { method: 'PUT', path: '/admin/queues/api/queues/pause' },
];

describe('provisioner front door', () => {
  let api: NestExpressApplication;
  let port: number;

  beforeAll(async () => {
    const settings = provisionerTestSettings({
      ...(await queueEnv()),
      STORAGE_ROOT: mkdtempSync(join(tmpdir(), 'provisioner-front-door-')),
    });
    api = await createProvisionerApiApp(settings);
    await api.init();
    port = await portOf(api.getHttpServer());
  });
  afterAll(() => api.close());

  it('refuses every route that takes a body before reading it, without a key or with a wrong one', async () => {
    // DRS takes its credential, the passport, in the body: it must read it (drs.e2e-spec.ts).
    const keyed = writeRoutes(api).filter((route) => !route.path.startsWith('/ga4gh/drs/'));
    const routes = [...keyed, ...DASHBOARD_WRITES];
    expect(routes.length).toBeGreaterThanOrEqual(3);
    const seen: { route: string; key: string; status: number }[] = [];
    for (const { method, path } of routes) {
      for (const [key, headers] of [
        ['none', {}],
        ['wrong', { 'X-API-Key': 'not-a-key-of-this-provisioner' }],
      ] as const) {
        const res = await answerWithoutBody(port, { method, path, headers });
        seen.push({ route: `${method} ${path}`, key, status: res.status });
      }
    }
    expect(seen).toEqual(seen.map((answer) => ({ ...answer, status: 401 })));
  });
});

/**
 * Two API replicas sharing the queue's backend, which also holds the failure counters: Redis
 * when the run has one, and BullMQ's PostgreSQL backend (the table <prefix>_auth.auth_failures).
 */
describe.each(['redis', 'postgres'] as const)(
  'provisioner throttles failed authentications per client across replicas (%s)',
  (backend) => {
    const LIMIT = 3;
    let a: NestExpressApplication;
    let b: NestExpressApplication;

    // Two replicas start, one after another.
    beforeAll(async () => {
      const env = await queueEnv(backend);
      const settings = provisionerTestSettings({
        ...env,
        STORAGE_ROOT: mkdtempSync(join(tmpdir(), 'provisioner-throttle-')),
        AUTH_FAILURE_LIMIT: String(LIMIT),
        TRUSTED_PROXIES: '127.0.0.1',
      });
      a = await createProvisionerApiApp(settings);
      await a.init();
      b = await createProvisionerApiApp(settings);
      await b.init();
    }, 2 * APP_START_MS);
    afterAll(async () => {
      await b?.close();
      await a?.close();
    });

    const from = (replica: NestExpressApplication, client: string, path = '/imports') =>
      request(replica.getHttpServer()).get(path).set('X-Forwarded-For', client);

    it('counts guesses on both replicas, the dashboard included, and refuses the one past the limit', async () => {
      const client = '203.0.113.1';
      await from(a, client).set('X-API-Key', 'guess-1').expect(401);
      await from(b, client, '/imports?API%5FKEY=guess-2').expect(401);
      await from(a, client, '/admin/queues').set('X-API-Key', 'guess-3').expect(401);
      const refused = await from(b, client).set('X-API-Key', 'guess-4').expect(429);
      expect(refused.headers['retry-after']).toBe('300');
      expect(refused.body).toEqual({
        status: 'Error',
        description: 'Too many failed authentications from this address; retry later',
        more: {},
      });
      await from(a, client).set('X-API-Key', 'guess-5').expect(429);
      await from(a, client, '/admin/queues').set('X-API-Key', 'guess-6').expect(429);
      // Valid keys behind the same address are never refused for the guesser's failures.
      await from(b, client).set('X-API-Key', TEST_WRITE_KEY).expect(200);
      await from(b, client, '/admin/queues').set('X-API-Key', TEST_WRITE_KEY).expect(200);
      await from(a, client).set('X-API-Key', TEST_READ_KEY).expect(200);
      await from(a, client).set('X-API-Key', 'guess-7').expect(429);
      await from(a, '203.0.113.2').set('X-API-Key', TEST_READ_KEY).expect(200);
    });

    it('never counts a caller whose key is right', async () => {
      const client = '203.0.113.3';
      for (let i = 0; i < 3 * LIMIT; i++) {
        await from(i % 2 === 0 ? a : b, client)
          .set('X-API-Key', TEST_READ_KEY)
          .expect(200);
      }
      for (let i = 0; i < LIMIT; i++) await from(a, client).set('X-API-Key', 'typo').expect(401);
      await from(a, client).set('X-API-Key', 'typo').expect(429);
    });
  },
);
