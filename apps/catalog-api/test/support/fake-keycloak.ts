import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, JWK, JWTPayload, SignJWT } from 'jose';

type SigningSecret = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

/** A user as Keycloak holds it (the UserModel fields its UserRepresentation is built from). */
export interface FakeKeycloakUser {
  id: string;
  username: string;
  firstName?: string;
  lastName?: string;
  email?: string;
  emailVerified: boolean;
  enabled: boolean;
  createdTimestamp: number;
  /** Custom attributes (the realm's user profile), left out of brief representations. */
  attributes?: Record<string, string[]>;
  requiredActions?: string[];
}

type Claims = JWTPayload & Record<string, unknown>;

interface TokenOptions {
  kid?: string;
  expiresInSeconds?: number;
  privateKey?: SigningSecret;
}

interface SigningKey {
  kid: string;
  privateKey: SigningSecret;
  publicJwk: JWK;
}

export interface FakeKeycloakOptions {
  realm?: string;
  clientId?: string;
  clientSecret?: string;
  /** Lifetime of service-account tokens, seconds (Keycloak's default is 300). */
  tokenLifetime?: number;
}

/**
 * A small Keycloak for tests, speaking the real protocols: the OpenID Connect token endpoint
 * (client-credentials grant), the admin REST API's user list (`first`/`max` paging,
 * `emailVerified` filter, `briefRepresentation`) and user-by-id, and the realm JWKS. It signs
 * tokens shaped as Keycloak issues them with RSA keys made in the test. `down()` makes it
 * refuse connections; `hang()` makes it accept and never answer; it counts requests per
 * endpoint.
 *
 * Followed (keycloak/keycloak): user representations as
 * `server-spi-private/.../models/utils/ModelToRepresentation.java` builds them (full:
 * `toRepresentation`, brief: `toBriefRepresentation`, chosen by `briefRepresentation` in
 * `services/.../resources/admin/UsersResource.java`; the single-user GET has no brief form);
 * tokens as `services/.../protocol/oidc/TokenManager.java` fills them (`initToken`:
 * `typ` Bearer, `azp` the client, `iss`, `sid`, `scope`, `acr`; `generateIDToken`: `typ` ID and
 * `aud` the client; refresh tokens `typ` Refresh or Offline with the realm as `aud`), with the
 * claims of a stock realm's default client scopes (`aud: account` from the roles scope's
 * audience resolution, `realm_access`, `resource_access`, profile and email claims).
 */
export class FakeKeycloak {
  readonly realm: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly users: FakeKeycloakUser[] = [];
  readonly requests = { token: 0, users: 0, user: 0, certs: 0 };
  /** Every admin-API request, for asserting paging. */
  readonly adminQueries: string[] = [];
  private readonly tokens = new Map<string, number>();
  private keys: SigningKey[] = [];
  private readonly unpublished = new Map<string, SigningKey>();
  private readonly sockets = new Set<Socket>();
  private server?: Server;
  private mode: 'up' | 'hang' = 'up';
  private tokenLifetime: number;
  url = '';

  constructor(options: FakeKeycloakOptions = {}) {
    this.realm = options.realm ?? 'research';
    this.clientId = options.clientId ?? 'catalog-sync';
    this.clientSecret = options.clientSecret ?? 'sync-secret';
    this.tokenLifetime = options.tokenLifetime ?? 300;
  }

  get issuer(): string {
    return `${this.url}/realms/${this.realm}`;
  }

  async start(port = 0): Promise<this> {
    if (this.keys.length === 0) await this.addSigningKey();
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Stops listening (connections are refused) until `start` is called again on the same port. */
  async down(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  async up(): Promise<void> {
    this.mode = 'up';
    await this.start(Number(new URL(this.url).port));
  }

  /** Accepts connections but never answers. */
  hang(): void {
    this.mode = 'hang';
  }

  async stop(): Promise<void> {
    await this.down();
  }

  addUser(user: Partial<FakeKeycloakUser> & { username: string }): FakeKeycloakUser {
    const full: FakeKeycloakUser = {
      id: randomUUID(),
      emailVerified: true,
      enabled: true,
      createdTimestamp: Date.now(),
      ...user,
    };
    this.users.push(full);
    return full;
  }

  /** Adds a key to the JWKS (as a realm key rotation does); returns its kid. */
  async addSigningKey(options: { publish?: boolean } = {}): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    const kid = randomBytes(8).toString('hex');
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
    const key = { kid, privateKey, publicJwk };
    if (options.publish === false) this.unpublished.set(kid, key);
    else this.keys.push(key);
    return kid;
  }

  /** Publishes a key made with `publish: false` (a rotation the cache has not seen yet). */
  publish(kid: string): void {
    const key = this.unpublished.get(kid);
    if (key === undefined) throw new Error(`no unpublished key ${kid}`);
    this.unpublished.delete(kid);
    this.keys.push(key);
  }

  /**
   * An access token as a stock realm issues it to a user logged in with `clientId` (default:
   * this realm's client): `aud` is `account`, the client is in `azp`. Claims override the
   * defaults (`undefined` removes one); `kid` picks the signing key (default: the first
   * published one).
   */
  accessToken(
    claims: Claims = {},
    options: TokenOptions & { clientId?: string } = {},
  ): Promise<string> {
    const clientId = options.clientId ?? this.clientId;
    return this.sign(
      {
        ...this.sessionClaims(clientId, options),
        typ: 'Bearer',
        aud: 'account',
        'allowed-origins': ['https://catalog.example.org'],
        realm_access: {
          roles: [`default-roles-${this.realm}`, 'offline_access', 'uma_authorization'],
        },
        resource_access: {
          account: { roles: ['manage-account', 'manage-account-links', 'view-profile'] },
        },
        scope: 'openid profile email',
        ...this.profileClaims(),
        ...claims,
      },
      options,
    );
  }

  /** An ID token (TokenManager.generateIDToken): `typ` ID, `aud` and `azp` the client. */
  idToken(claims: Claims = {}, options: TokenOptions = {}): Promise<string> {
    return this.sign(
      {
        ...this.sessionClaims(this.clientId, options),
        typ: 'ID',
        aud: this.clientId,
        at_hash: randomBytes(16).toString('base64url'),
        ...this.profileClaims(),
        ...claims,
      },
      options,
    );
  }

  /** A refresh token (`Refresh`, or `Offline` for offline access), the realm as audience. */
  refreshToken(
    claims: Claims = {},
    options: TokenOptions & { offline?: boolean } = {},
  ): Promise<string> {
    return this.sign(
      {
        ...this.sessionClaims(this.clientId, options),
        typ: options.offline ? 'Offline' : 'Refresh',
        aud: this.issuer,
        scope: 'openid profile email',
        ...claims,
      },
      options,
    );
  }

  private sessionClaims(clientId: string, options: TokenOptions): Claims {
    const now = Math.floor(Date.now() / 1000);
    return {
      exp: now + (options.expiresInSeconds ?? 300),
      iat: now,
      jti: randomUUID(),
      iss: this.issuer,
      sub: randomUUID(),
      azp: clientId,
      sid: randomUUID(),
      acr: '1',
    };
  }

  private profileClaims(): Claims {
    return {
      email_verified: true,
      name: 'Some One',
      preferred_username: 'someone',
      given_name: 'Some',
      family_name: 'One',
      email: 'someone@uni.example',
    };
  }

  private sign(payload: Claims, options: TokenOptions): Promise<string> {
    const kid = options.kid ?? this.keys[0].kid;
    const key = this.keys.find((k) => k.kid === kid) ?? this.unpublished.get(kid) ?? this.keys[0];
    const claims = Object.fromEntries(
      Object.entries(payload).filter(([, value]) => value !== undefined),
    );
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid })
      .sign(options.privateKey ?? key.privateKey);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    if (this.mode === 'hang') return;
    const url = new URL(req.url ?? '/', this.url);
    const realmPath = `/realms/${this.realm}`;
    const adminPath = `/admin/realms/${this.realm}`;
    if (req.method === 'POST' && url.pathname === `${realmPath}/protocol/openid-connect/token`) {
      this.requests.token++;
      return void this.readBody(req).then((body) => this.token(body, res));
    }
    if (req.method === 'GET' && url.pathname === `${realmPath}/protocol/openid-connect/certs`) {
      this.requests.certs++;
      return this.send(res, 200, { keys: this.keys.map((k) => k.publicJwk) });
    }
    if (req.method === 'GET' && url.pathname.startsWith(`${adminPath}/users`)) {
      if (!this.authorised(req)) return this.send(res, 401, { error: 'HTTP 401 Unauthorized' });
      this.adminQueries.push(url.pathname + url.search);
      const rest = url.pathname.slice(`${adminPath}/users`.length);
      if (rest === '' || rest === '/') return this.listUsers(url, res);
      this.requests.user++;
      const user = this.users.find((u) => u.id === decodeURIComponent(rest.slice(1)));
      return user
        ? this.send(res, 200, fullRepresentation(user))
        : this.send(res, 404, { error: 'User not found' });
    }
    this.send(res, 404, { error: 'RESTEASY003210: Could not find resource' });
  }

  private token(body: string, res: ServerResponse): void {
    const form = new URLSearchParams(body);
    if (form.get('grant_type') !== 'client_credentials') {
      return this.send(res, 400, {
        error: 'unsupported_grant_type',
        error_description: 'Unsupported grant_type',
      });
    }
    if (
      form.get('client_id') !== this.clientId ||
      form.get('client_secret') !== this.clientSecret
    ) {
      return this.send(res, 401, {
        error: 'unauthorized_client',
        error_description: 'Invalid client or Invalid client credentials',
      });
    }
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, Date.now() + this.tokenLifetime * 1000);
    this.send(res, 200, {
      access_token: token,
      expires_in: this.tokenLifetime,
      refresh_expires_in: 0,
      token_type: 'Bearer',
      'not-before-policy': 0,
      scope: 'profile email',
    });
  }

  private listUsers(url: URL, res: ServerResponse): void {
    this.requests.users++;
    const first = Number(url.searchParams.get('first') ?? '0');
    const max = Number(url.searchParams.get('max') ?? '100');
    const verified = url.searchParams.get('emailVerified');
    // Keycloak reads the flag as a Java Boolean: only "true" (any case) is true.
    const brief = url.searchParams.get('briefRepresentation')?.toLowerCase() === 'true';
    const matching = [...this.users]
      .filter((u) => verified === null || String(u.emailVerified) === verified)
      .sort((a, b) => a.username.localeCompare(b.username));
    const page = matching.slice(first, first + max);
    this.send(res, 200, page.map(brief ? briefRepresentation : fullRepresentation));
  }

  /** Forgets every service-account token, as a Keycloak restart with new keys would. */
  revokeTokens(): void {
    this.tokens.clear();
  }

  private authorised(req: IncomingMessage): boolean {
    const match = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    const expiry = match ? this.tokens.get(match[1]) : undefined;
    return expiry !== undefined && expiry > Date.now();
  }

  private readBody(req: IncomingMessage): Promise<string> {
    return new Promise((resolve) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => resolve(body));
    });
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  }
}

/** Keycloak's access flags on a listed user, for an admin allowed to view and manage users. */
const ADMIN_ACCESS = {
  manageGroupMembership: true,
  view: true,
  mapRoles: true,
  impersonate: false,
  manage: true,
};

/** ModelToRepresentation.toBriefRepresentation: no attributes, required actions, credentials. */
function briefRepresentation(user: FakeKeycloakUser): Record<string, unknown> {
  return {
    id: user.id,
    username: user.username,
    createdTimestamp: user.createdTimestamp,
    ...(user.firstName === undefined ? {} : { firstName: user.firstName }),
    ...(user.lastName === undefined ? {} : { lastName: user.lastName }),
    ...(user.email === undefined ? {} : { email: user.email }),
    enabled: user.enabled,
    emailVerified: user.emailVerified,
    access: ADMIN_ACCESS,
  };
}

/** ModelToRepresentation.toRepresentation: the brief fields plus the user's full record. */
function fullRepresentation(user: FakeKeycloakUser): Record<string, unknown> {
  return {
    ...briefRepresentation(user),
    totp: false,
    disableableCredentialTypes: [],
    requiredActions: user.requiredActions ?? [],
    notBefore: 0,
    ...(user.attributes === undefined ? {} : { attributes: user.attributes }),
  };
}
