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
