import request from 'supertest';
import type { IncomingMessage } from 'node:http';
import { AuthFailureLimiter, hashApiKey } from '@app/auth';
import { answerWithoutBody, portOf } from '../../../test/support/incomplete-body';
import {
  CatalogTestApp,
  startCatalogApp,
  TEST_GLOBAL_KEY,
} from '../../../test/support/catalog-app';
import { until } from '../../../test/support/wait';
import { writeRoutes } from '../../../test/support/write-routes';
import { ACCESS_REQUEST_PATHS } from '../src/access-requests/access-request-gate';
import { APP_START_MS } from '../../../test/support/timeouts';

describe('catalog-api front door', () => {
  let t: CatalogTestApp;
  let port: number;

  beforeAll(async () => {
    // Failed authentications unthrottled: each route's wrong key must meet that route's refusal,
    // not the address's block after AUTH_FAILURE_LIMIT of them (the next describe tests that).
    t = await startCatalogApp({ AUTH_FAILURE_LIMIT: '0' });
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

/**
 * Two replicas on one database, as in production: failed authentications are counted in the
 * shared table, per client address (X-Forwarded-For of the trusted proxy, here the loopback).
 */
describe('catalog-api throttles failed authentications per client, across replicas', () => {
  const LIMIT = 4;
  const REGISTRATION_KEY = 'test-registration-key-0123456789abcdef';
  const env = {
    AUTH_FAILURE_LIMIT: String(LIMIT),
    AUTH_FAILURE_BLOCK_MS: '3000',
    TRUSTED_PROXIES: '127.0.0.1',
    REGISTRATION_API_KEY_SHA256: hashApiKey(REGISTRATION_KEY),
  };
  let a: CatalogTestApp;
  let b: CatalogTestApp;

  // Two replicas start, one after another.
  beforeAll(async () => {
    a = await startCatalogApp(env);
    b = await startCatalogApp(env, a.databaseUrl);
  }, 2 * APP_START_MS);
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  const from = (replica: CatalogTestApp, client: string, path = '/api/projects') =>
    request(replica.server).get(path).set('X-Forwarded-For', client);

  /** Every way a credential travels, each wrong: header, query, encoded query name, bearer. */
  const guesses = [
    (r: CatalogTestApp, c: string) => from(r, c).set('X-API-Key', 'guess-1'),
    (r: CatalogTestApp, c: string) => from(r, c, '/api/projects?API_KEY=guess-2'),
    (r: CatalogTestApp, c: string) => from(r, c, '/api/projects?API%5FKEY=guess-3'),
    (r: CatalogTestApp, c: string) =>
      from(r, c, '/api/users').set('Authorization', 'Bearer guess-4'),
  ];

  it('refuses the guess past the limit with 429 and Retry-After, wherever the guesses went', async () => {
    const client = '198.51.100.1';
    const statuses: number[] = [];
    for (const [i, guess] of guesses.entries()) {
      statuses.push((await guess(i % 2 === 0 ? a : b, client)).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401]);
    const refused = await from(b, client).set('X-API-Key', 'guess-5');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('3');
    expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(refused.body).toEqual({
      status: 'Error',
      description: 'Too many failed authentications from this address; retry later',
      more: {},
    });
    // Every further guess is refused on either replica (A learns of the block from the store at
    // its next failure there, then from its memory).
    await from(a, client).set('X-API-Key', 'guess-6').expect(429);
    await from(a, client, '/api/projects?API_KEY=guess-7').expect(429);
    await from(b, client, '/api/users').set('Authorization', 'Bearer guess-8').expect(429);
    // Holders of valid keys behind the same address are never refused for the guesser's
    // failures: the global key in either form, and the provisioner's registration key.
    await from(b, client).set('X-API-Key', TEST_GLOBAL_KEY).expect(200);
    await from(a, client).set('X-API-Key', TEST_GLOBAL_KEY).expect(200);
    await from(a, client, `/api/projects?API_KEY=${TEST_GLOBAL_KEY}`).expect(200);
    const registration = await request(a.server)
      .post('/api/registrations')
      .set('X-Forwarded-For', client)
      .set('X-API-Key', REGISTRATION_KEY)
      .send({});
    expect(registration.status).toBe(400);
    await from(a, client).set('X-API-Key', 'guess-9').expect(429);
    // Other addresses are not affected; requests without credentials neither.
    await from(a, '198.51.100.2').set('X-API-Key', TEST_GLOBAL_KEY).expect(200);
    await from(b, client, '/api/cohorts').expect(200);
  });

  it('never counts, stores or slows a caller whose key is right', async () => {
    const client = '198.51.100.3';
    for (let i = 0; i < 3 * LIMIT; i++) {
      await from(i % 2 === 0 ? a : b, client)
        .set('X-API-Key', TEST_GLOBAL_KEY)
        .expect(200);
    }
    const rows = await a.dataSource.query('SELECT client FROM auth_failures WHERE client = $1', [
      client,
    ]);
    expect(rows).toEqual([]);
    // Its first wrong key is still a plain 401: the successes left no trace.
    await from(a, client).set('X-API-Key', 'typo').expect(401);
  });

  it('serves a valid key from a blocked address on the fast path too (an answer it cached)', async () => {
    const client = '198.51.100.4';
    await from(a, client).set('X-API-Key', TEST_GLOBAL_KEY).expect(200);
    await from(a, client).set('X-API-Key', TEST_GLOBAL_KEY).expect(200);
    for (let i = 0; i <= LIMIT; i++) await from(a, client).set('X-API-Key', `guess-${i}`);
    await from(a, client).set('X-API-Key', 'guess-again').expect(429);
    await from(a, client).set('X-API-Key', TEST_GLOBAL_KEY).expect(200);
  });

  it('counts an IPv6 client by its /64 network', async () => {
    for (let i = 1; i <= LIMIT; i++) {
      await from(a, `2001:db8:7:7::${i}`).set('X-API-Key', 'guess').expect(401);
    }
    await from(b, '2001:db8:7:7:ffff::9').set('X-API-Key', 'guess').expect(429);
    await from(b, '2001:db8:7:8::1').set('X-API-Key', TEST_GLOBAL_KEY).expect(200);
  });

  it('forgets the block once it is over', async () => {
    const client = '198.51.100.5';
    for (let i = 0; i <= LIMIT; i++) await from(a, client).set('X-API-Key', `guess-${i}`);
    await from(a, client).set('X-API-Key', 'guess').expect(429);
    // As the proxy hands it on; asked of the limiter, since a failure now would renew the block.
    const seen = {
      socket: { remoteAddress: '127.0.0.1' },
      headers: { 'x-forwarded-for': client },
    } as unknown as IncomingMessage;
    const limiter = a.app.get(AuthFailureLimiter);
    expect(limiter.refusal(seen)).toBeDefined();
    await until(() => limiter.refusal(seen) === undefined, 'the 3 s block to end');
  });
});
