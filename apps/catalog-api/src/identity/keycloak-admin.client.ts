import { Inject, Injectable, Logger } from '@nestjs/common';
import { ServiceUnavailableError } from '@app/errors';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { isKeycloakUser, isTokenResponse, KeycloakUser } from './keycloak-types';

/** Users fetched per admin-API call while listing. */
export const KEYCLOAK_PAGE_SIZE = 100;

/** A token is renewed this long before Keycloak says it expires (or at half its life if shorter). */
const TOKEN_RENEWAL_MARGIN_MS = 30_000;

interface CachedToken {
  value: string;
  renewAt: number;
}

/** Where the admin API is and how the catalog authenticates to it. */
interface AdminConnection {
  realmUrl: string;
  adminUrl: string;
  clientId: string;
  clientSecret: string;
}

/**
 * A small client for the Keycloak admin REST API: a client-credentials token (cached until
 * shortly before it expires), users page by page, one user by id. Every call has a time limit;
 * an unreachable, slow or refusing server becomes a ServiceUnavailableError (503), never a hang.
 */
@Injectable()
export class KeycloakAdminClient {
  private readonly logger = new Logger(KeycloakAdminClient.name);
  private readonly connection?: AdminConnection;
  private readonly timeoutMs: number;
  private token?: CachedToken;
  private pendingToken?: Promise<string>;

  constructor(@Inject(CATALOG_SETTINGS) settings: CatalogSettings) {
    this.timeoutMs = settings.IDP_TIMEOUT_MS;
    const realmUrl = settings.idpRealmUrl;
    if (
      realmUrl !== undefined &&
      settings.IDP_URL !== undefined &&
      settings.IDP_REALM !== undefined &&
      settings.IDP_CLIENT_ID !== undefined &&
      settings.IDP_CLIENT_SECRET !== undefined
    ) {
      this.connection = {
        realmUrl,
        adminUrl: `${settings.IDP_URL}/admin/realms/${encodeURIComponent(settings.IDP_REALM)}`,
        clientId: settings.IDP_CLIENT_ID,
        clientSecret: settings.IDP_CLIENT_SECRET,
      };
    }
  }

  /** True when the settings name a realm and a client to read it with. */
  get configured(): boolean {
    return this.connection !== undefined;
  }

  /**
   * Every user, one page per iteration. `emailVerified=true` is asked of the server to save
   * traffic, but callers still check the flag: older servers ignore the parameter.
   * `briefRepresentation=true` leaves out what the catalog never reads (attributes, required
   * actions, credential types), which Keycloak otherwise loads for every listed user.
   */
  async *listUsers(
    options: { verifiedOnly?: boolean; pageSize?: number; signal?: AbortSignal } = {},
  ): AsyncGenerator<KeycloakUser[]> {
    const pageSize = options.pageSize ?? KEYCLOAK_PAGE_SIZE;
    for (let first = 0; ; first += pageSize) {
      const query = new URLSearchParams({
        first: String(first),
        max: String(pageSize),
        briefRepresentation: 'true',
      });
      if (options.verifiedOnly) query.set('emailVerified', 'true');
      const page = await this.adminGet(`/users?${query.toString()}`, options.signal);
      if (!Array.isArray(page))
        throw this.unavailable('unexpected user list from the identity provider');
      const users = page.filter(isKeycloakUser);
      if (users.length > 0) yield users;
      if (page.length < pageSize) return;
    }
  }

  /**
   * One user by id (the token subject); null when the identity provider does not know it.
   * Keycloak's `GET /users/{id}` has no brief form (UserResource reads no such parameter).
   */
  async getUser(id: string, signal?: AbortSignal): Promise<KeycloakUser | null> {
    const user = await this.adminGet(`/users/${encodeURIComponent(id)}`, signal, true);
    if (user === null) return null;
    if (!isKeycloakUser(user)) throw this.unavailable('unexpected user from the identity provider');
    return user;
  }

  private async adminGet(
    path: string,
    signal?: AbortSignal,
    allowNotFound = false,
  ): Promise<unknown> {
    const { adminUrl } = this.requireConnection();
    for (let attempt = 1; ; attempt++) {
      const token = await this.accessToken(signal);
      const res = await this.call(`${adminUrl}${path}`, {
        headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
        signal,
      });
      if (res.status === 401 && attempt === 1) {
        // The cached token may have been revoked or the server restarted: one fresh token, once.
        this.token = undefined;
        continue;
      }
      if (res.status === 404 && allowNotFound) return null;
      if (!res.ok) {
        throw this.unavailable(`identity provider answered ${res.status}`, { status: res.status });
      }
      return this.json(res);
    }
  }

  private accessToken(signal?: AbortSignal): Promise<string> {
    if (this.token !== undefined && Date.now() < this.token.renewAt) {
      return Promise.resolve(this.token.value);
    }
    // Concurrent callers share one token request instead of stampeding the token endpoint.
    this.pendingToken ??= this.fetchToken(signal).finally(() => {
      this.pendingToken = undefined;
    });
    return this.pendingToken;
  }

  private async fetchToken(signal?: AbortSignal): Promise<string> {
    const { realmUrl, clientId, clientSecret } = this.requireConnection();
    const res = await this.call(`${realmUrl}/protocol/openid-connect/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: clientSecret,
      }).toString(),
      signal,
    });
    if (!res.ok) {
      throw this.unavailable('identity provider refused the catalog client credentials', {
        status: res.status,
      });
    }
    const body = await this.json(res);
    if (!isTokenResponse(body))
      throw this.unavailable('unexpected token response from the identity provider');
    const lifetimeMs = body.expires_in * 1000;
    const margin = Math.min(TOKEN_RENEWAL_MARGIN_MS, lifetimeMs / 2);
    this.token = { value: body.access_token, renewAt: Date.now() + lifetimeMs - margin };
    return body.access_token;
  }

  /** fetch with this client's time limit (plus the caller's signal); network failures → 503. */
  private async call(url: string, init: RequestInit & { signal?: AbortSignal }): Promise<Response> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = init.signal ? AbortSignal.any([timeout, init.signal]) : timeout;
    try {
      return await fetch(url, { ...init, signal, redirect: 'manual' });
    } catch (error) {
      throw this.unavailable(this.reason(error));
    }
  }

  private async json(res: Response): Promise<unknown> {
    try {
      return await res.json();
    } catch (error) {
      throw this.unavailable(this.reason(error));
    }
  }

  private reason(error: unknown): string {
    // Duck-typed: the abort reason is a DOMException, which need not share this realm's Error.
    const { name, cause } = (error ?? {}) as { name?: unknown; cause?: { code?: unknown } };
    if (name === 'TimeoutError' || name === 'AbortError') {
      return 'identity provider did not answer in time';
    }
    const code = typeof cause?.code === 'string' ? ` (${cause.code})` : '';
    return `identity provider unreachable${code}`;
  }

  private unavailable(reason: string, more: Record<string, unknown> = {}): ServiceUnavailableError {
    this.logger.warn({ reason, ...more }, 'identity provider call failed');
    return new ServiceUnavailableError('Identity provider unavailable', { reason, ...more });
  }

  private requireConnection(): AdminConnection {
    if (this.connection === undefined) {
      throw new ServiceUnavailableError('Identity provider not configured', {
        reason: 'set IDP_URL, IDP_REALM, IDP_CLIENT_ID and IDP_CLIENT_SECRET',
      });
    }
    return this.connection;
  }
}
