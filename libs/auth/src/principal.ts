/** Who is calling, as established from their credentials. */
export interface Principal {
  /** Key kind or login type, e.g. `global`, `user`, `endpoint`, `write`, `read`, `bearer`. */
  kind: string;
  /** Identity within that kind (user id, endpoint id, token subject). */
  id?: number | string;
  name?: string;
  /** Only principals that may write pass the guard on non-GET/HEAD requests. */
  canWrite: boolean;
  /**
   * A scoped principal passes the guard only on routes marked `@ScopedRoute(scope)` with this
   * same scope; every other route, reads included, answers it 403.
   */
  scope?: string;
  /**
   * A service that exchanges its own callers' logins (the DRS side's broker key): on a route
   * that allows bearer tokens, the `Authorization: Bearer` it forwards beside its key is
   * verified and becomes the principal, and a refused login is not counted against the
   * service's address by the failure limiter (many people stand behind it; it answers them).
   */
  vouchesForLogins?: boolean;
}

/** Maps an API key to a principal; each app implements it (catalog: database; provisioner: settings). */
export interface ApiKeyResolver {
  resolve(apiKey: string): Promise<Principal | null>;
}

/** Maps an `Authorization: Bearer` token to a principal, for routes marked `@AllowBearer()`. */
export interface BearerTokenResolver {
  resolve(token: string): Promise<Principal | null>;
}

export const API_KEY_RESOLVER = Symbol('API_KEY_RESOLVER');
export const BEARER_TOKEN_RESOLVER = Symbol('BEARER_TOKEN_RESOLVER');
export const AUTH_OPTIONS = Symbol('AUTH_OPTIONS');

export interface AuthOptions {
  /** The 403 sentence for a read-only key on a write. */
  writeDeniedMessage: string;
}

export const DEFAULT_AUTH_OPTIONS: AuthOptions = {
  writeDeniedMessage: 'Write operations require the global API key',
};

/**
 * The answer header of a route read with a verified login: its subject (percent-encoded). A
 * service forwarding a caller's login (`vouchesForLogins`) requires it, so that an answer given
 * with the service's own rights is never taken for the caller's.
 */
export const LOGIN_SUBJECT_HEADER = 'X-Login-Subject';
