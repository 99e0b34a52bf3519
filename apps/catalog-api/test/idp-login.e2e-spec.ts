import request from 'supertest';
import { generateKeyPair } from 'jose';
import { hashApiKey } from '@app/auth';
import { CatalogTestApp, TEST_GLOBAL_KEY } from '../../../test/support/catalog-app';
import { FakeKeycloak } from './support/fake-keycloak';
import { addUser, startIntegrationApp } from './support/integration-fixture';
import { APP_START_MS } from '../../../test/support/timeouts';

// Starting apps on fresh databases takes seconds when the machine is busy.
jest.setTimeout(30_000);

const USER_KEY = 'login-test-user-key-0123456789abcdef';
const ENDPOINT_KEY = 'e'.repeat(64);

/**
 * Tokens are shaped as Keycloak issues them (test/support/fake-keycloak.ts follows
 * keycloak/keycloak services/src/main/java/org/keycloak/protocol/oidc/TokenManager.java and
 * core/src/main/java/org/keycloak/representations/JsonWebToken.java): RS256 with `kid`, `iss`
 * <url>/realms/<realm>, `typ` Bearer, `azp` the client, `aud` account in a stock realm.
 */
describe('GET /api/users with an identity-provider access token', () => {
  let kc: FakeKeycloak;
  let t: CatalogTestApp;
  let strict: CatalogTestApp;

  // Two apps start, one after another.
  beforeAll(async () => {
    kc = await new FakeKeycloak().start();
    // A stock realm: the catalog's client, no audience configured.
    t = await startIntegrationApp({
      IDP_URL: kc.url,
      IDP_REALM: kc.realm,
      IDP_CLIENT_ID: kc.clientId,
      IDP_CLIENT_SECRET: kc.clientSecret,
      // Every unknown kid may trigger a refetch, so rotation is visible at once in the tests.
      IDP_JWKS_COOLDOWN_MS: '0',
      IDP_TIMEOUT_MS: '1000',
    });
    // An operator who added an audience mapper and asks for it explicitly.
    strict = await startIntegrationApp(
      {
        IDP_URL: kc.url,
        IDP_REALM: kc.realm,
        IDP_CLIENT_ID: kc.clientId,
        IDP_CLIENT_SECRET: kc.clientSecret,
        IDP_AUDIENCE: 'catalog-api',
        IDP_TIMEOUT_MS: '1000',
      },
      t.databaseUrl,
    );
    await addUser(t.dataSource, 'ada', {
      firstName: 'Ada',
      lastName: 'Lovelace',
      apiKeyHash: hashApiKey(USER_KEY),
    });
    await addUser(t.dataSource, 'gone', { oidcId: 'sub-gone', active: false });
    await t.dataSource.query(
      `INSERT INTO endpoints (name, url_pattern, api_key_hash) VALUES ('Catalog', 'https://x/\${entity_id}', $1)`,
      [hashApiKey(ENDPOINT_KEY)],
    );
  }, 2 * APP_START_MS);

  afterAll(async () => {
    await t?.close();
    await strict?.close();
    await kc?.stop();
  });

  const users = (token?: string, app: CatalogTestApp = t) => {
    const req = request(app.server).get('/api/users');
    return token === undefined ? req : req.set('Authorization', `Bearer ${token}`);
  };

  it('accepts a stock realm token for its client (aud account, azp the client) and lists users', async () => {
    const token = await kc.accessToken();
    const [header, payload] = token
      .split('.')
      .slice(0, 2)
      .map(
        (part) => JSON.parse(Buffer.from(part, 'base64url').toString()) as Record<string, unknown>,
      );
    expect(header).toEqual({ alg: 'RS256', typ: 'JWT', kid: expect.any(String) });
    expect(payload).toMatchObject({
      iss: `${kc.url}/realms/${kc.realm}`,
      aud: 'account',
      azp: kc.clientId,
      typ: 'Bearer',
      email_verified: true,
    });
    const res = await users(token).expect(200);
    expect(res.body.results).toEqual([{ id: expect.any(Number), text: 'Ada Lovelace' }]);
  });

  it('accepts the lower-case type a client may ask for, and a token naming the client in aud', async () => {
    await users(await kc.accessToken({ typ: 'bearer' })).expect(200);
    // Issued to another client, with an audience mapper adding ours.
    await users(
      await kc.accessToken({ aud: [kc.clientId, 'account'] }, { clientId: 'catalog-web' }),
    ).expect(200);
  });

  it('refuses a token issued to another client of the realm', async () => {
    const res = await users(await kc.accessToken({}, { clientId: 'other-app' })).expect(401);
    expect(res.body.description).toBe('Invalid or expired access token');
  });

  it('checks aud strictly when IDP_AUDIENCE is set: the stock token is refused', async () => {
    await users(await kc.accessToken(), strict).expect(401);
    await users(await kc.accessToken({ aud: ['catalog-api', 'account'] }), strict).expect(200);
    // The configured audience is what counts, whoever the token was issued to.
    await users(
      await kc.accessToken({ aud: 'catalog-api' }, { clientId: 'catalog-web' }),
      strict,
    ).expect(200);
    await users(await kc.accessToken({ aud: kc.clientId }), strict).expect(401);
  });

  it('still accepts the global key and user keys', async () => {
    await request(t.server).get('/api/users').set('X-API-Key', TEST_GLOBAL_KEY).expect(200);
    await request(t.server).get('/api/users').set('X-API-Key', USER_KEY).expect(200);
  });

  it('refuses an endpoint key with 403 and no credentials with 401', async () => {
    await request(t.server).get('/api/users').set('X-API-Key', ENDPOINT_KEY).expect(403);
    const res = await users().expect(401);
    expect(res.body.description).toBe('API key required');
  });

  it('refuses an expired token', async () => {
    const res = await users(await kc.accessToken({}, { expiresInSeconds: -3600 })).expect(401);
    expect(res.body).toEqual({
      status: 'Error',
      description: 'Invalid or expired access token',
      more: {},
    });
    expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  });

  it('refuses a token from another realm or issuer', async () => {
    await users(await kc.accessToken({ iss: `${kc.url}/realms/other` })).expect(401);
    await users(
      await kc.accessToken({ iss: 'https://idp.elsewhere.example/realms/research' }),
    ).expect(401);
  });

  it('refuses a token whose signature does not verify', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    // Names a published kid but is signed by a key nobody published.
    await users(await kc.accessToken({}, { privateKey })).expect(401);
    const valid = await kc.accessToken();
    const [header, payload] = valid.split('.');
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'admin' })).toString('base64url')}.${valid.split('.')[2]}`;
    await users(forged).expect(401);
  });

  it('refuses ID, refresh and offline tokens of its own client, untyped tokens, and garbage', async () => {
    // An ID token has aud = the client and passes every other check: its typ refuses it.
    await users(await kc.idToken()).expect(401);
    await users(await kc.refreshToken()).expect(401);
    await users(await kc.refreshToken({}, { offline: true })).expect(401);
    await users(await kc.accessToken({ typ: undefined })).expect(401);
    await users(await kc.accessToken({ typ: 'DPoP' })).expect(401);
    await users('not.a.jwt').expect(401);
  });

  it('refuses the token of a deactivated catalog user', async () => {
    await users(await kc.accessToken({ sub: 'sub-gone' })).expect(401);
  });

  it('refetches the key set for an unknown kid: rejects while unpublished, accepts once rotated in', async () => {
    await users(await kc.accessToken()).expect(200);
    const kid = await kc.addSigningKey({ publish: false });
    const fetchesBefore = kc.requests.certs;
    await users(await kc.accessToken({}, { kid })).expect(401);
    expect(kc.requests.certs).toBe(fetchesBefore + 1);
    kc.publish(kid);
    await users(await kc.accessToken({}, { kid })).expect(200);
    expect(kc.requests.certs).toBe(fetchesBefore + 2);
    // Known kids are served from the cache.
    await users(await kc.accessToken({}, { kid })).expect(200);
    expect(kc.requests.certs).toBe(fetchesBefore + 2);
  });

  it('does not accept bearer tokens on routes that take only API keys', async () => {
    const res = await request(t.server)
      .get('/api/datasets')
      .set('Authorization', `Bearer ${await kc.accessToken()}`)
      .expect(401);
    expect(res.body.description).toBe('API key required');
  });
});

describe('bearer login while the identity provider is unreachable', () => {
  it('answers 503 when the signing keys cannot be fetched', async () => {
    const kc = await new FakeKeycloak().start();
    const token = await kc.accessToken();
    const t = await startIntegrationApp({
      IDP_URL: kc.url,
      IDP_REALM: kc.realm,
      IDP_CLIENT_ID: kc.clientId,
      IDP_CLIENT_SECRET: kc.clientSecret,
      IDP_TIMEOUT_MS: '500',
    });
    try {
      await kc.down();
      const res = await request(t.server)
        .get('/api/users')
        .set('Authorization', `Bearer ${token}`)
        .expect(503);
      expect(res.body.description).toBe('Identity provider unavailable');
    } finally {
      await t.close();
    }
  });
});
