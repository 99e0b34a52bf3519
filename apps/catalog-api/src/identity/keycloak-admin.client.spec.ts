import { ServiceUnavailableError } from '@app/errors';
import { FakeKeycloak } from '../../test/support/fake-keycloak';
import { loadCatalogSettings } from '../config/catalog.settings';
import { KeycloakAdminClient } from './keycloak-admin.client';
import type { KeycloakUser } from './keycloak-types';

describe('KeycloakAdminClient against a fake Keycloak', () => {
  let kc: FakeKeycloak;

  beforeAll(async () => {
    kc = await new FakeKeycloak({ tokenLifetime: 60 }).start();
  });
  afterAll(() => kc.stop());
  afterEach(() => jest.restoreAllMocks());

  const client = (over: Record<string, string> = {}) =>
    new KeycloakAdminClient(
      loadCatalogSettings({
        DATABASE_URL: 'postgres://unused@127.0.0.1/unused',
        IDP_URL: `${kc.url}/`,
        IDP_REALM: kc.realm,
        IDP_CLIENT_ID: kc.clientId,
        IDP_CLIENT_SECRET: kc.clientSecret,
        // Generous for a busy machine; the silence test sets its own short limit.
        IDP_TIMEOUT_MS: '5000',
        ...over,
      }),
    );

  it('is not configured without a client', () => {
    const bare = new KeycloakAdminClient(loadCatalogSettings({ DATABASE_URL: 'postgres://u@h/d' }));
    expect(bare.configured).toBe(false);
  });

  it('fetches one user by id, and null for an unknown id', async () => {
    const ada = kc.addUser({ username: 'ada', email: 'ada@x.org', firstName: 'Ada' });
    const c = client();
    await expect(c.getUser(ada.id)).resolves.toMatchObject({
      id: ada.id,
      email: 'ada@x.org',
      emailVerified: true,
    });
    await expect(c.getUser('missing')).resolves.toBeNull();
  });

  it('lists users in brief representation, as Keycloak leaves out attributes and required actions', async () => {
    kc.addUser({
      username: 'brief-bea',
      email: 'bea@x.org',
      attributes: { orcid: ['0000-0002-1825-0097'] },
      requiredActions: ['VERIFY_EMAIL'],
    });
    const c = client();
    const listed: KeycloakUser[] = [];
    for await (const page of c.listUsers()) listed.push(...page);
    expect(kc.adminQueries.at(-1)).toContain('briefRepresentation=true');
    const bea = listed.find((u) => u.username === 'brief-bea');
    expect(bea).toMatchObject({ email: 'bea@x.org', emailVerified: true, enabled: true });
    for (const field of ['attributes', 'requiredActions', 'notBefore', 'totp']) {
      expect(bea).not.toHaveProperty(field);
    }
    // The single-user GET has no brief form: Keycloak answers the full record.
    await expect(c.getUser(bea?.id as string)).resolves.toMatchObject({
      attributes: { orcid: ['0000-0002-1825-0097'] },
      requiredActions: ['VERIFY_EMAIL'],
    });
  });

  it('keeps its token until shortly before it expires, and shares one request among callers', async () => {
    const c = client();
    const before = kc.requests.token;
    await Promise.all([c.getUser('a'), c.getUser('b'), c.getUser('c')]);
    expect(kc.requests.token).toBe(before + 1);
    const now = Date.now();
    jest.spyOn(Date, 'now').mockReturnValue(now + 29_000);
    await c.getUser('d');
    expect(kc.requests.token).toBe(before + 1);
    jest.spyOn(Date, 'now').mockReturnValue(now + 31_000);
    await c.getUser('e');
    expect(kc.requests.token).toBe(before + 2);
  });

  it('turns refused credentials into 503', async () => {
    const error = await client({ IDP_CLIENT_SECRET: 'wrong' })
      .getUser('x')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect((error as ServiceUnavailableError).more).toMatchObject({
      reason: 'identity provider refused the catalog client credentials',
      status: 401,
    });
  });

  it('turns silence and refused connections into 503', async () => {
    kc.hang();
    try {
      const silent = await client({ IDP_TIMEOUT_MS: '300' })
        .getUser('x')
        .catch((e: unknown) => e);
      expect((silent as ServiceUnavailableError).more.reason).toBe(
        'identity provider did not answer in time',
      );
    } finally {
      await kc.down();
      await kc.up();
    }
    await kc.down();
    try {
      const refused = await client()
        .getUser('x')
        .catch((e: unknown) => e);
      // ECONNREFUSED, or a pooled keep-alive socket the server dropped (UND_ERR_SOCKET).
      expect((refused as ServiceUnavailableError).more.reason).toMatch(
        /^identity provider unreachable/,
      );
    } finally {
      await kc.up();
    }
  });
});
