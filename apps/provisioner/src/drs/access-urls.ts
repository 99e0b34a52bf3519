import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The route of access URLs, `/drs-bytes/<token>/<name>`. Its token segment is a credential:
 * logs and spans redact it (ACCESS_URL_TOKEN_PATHS, given to the logging and telemetry set-up).
 */
export const ACCESS_URL_ROUTE = 'drs-bytes';
export const ACCESS_URL_TOKEN_PATHS: readonly string[] = [`/${ACCESS_URL_ROUTE}/`];

/** What an access token lets its holder read: one object, until `exp` (epoch seconds). */
export interface AccessToken {
  object: string;
  exp: number;
}

/**
 * Short-lived tokens bound to one object: `<payload>.<HMAC-SHA256 of it>`, both base64url, the
 * payload `{o: object id, e: expiry}`. The key is DRS_URL_SIGNING_KEY (one per deployment) or a
 * random one per process. A token names an object id, never a path: the path is resolved from
 * the dataset's provenance when the bytes are read.
 */
export class AccessUrls {
  private readonly key: Buffer;

  constructor(
    key: string | undefined,
    private readonly lifetimeSeconds: number,
  ) {
    this.key = key === undefined ? randomBytes(32) : Buffer.from(key, 'utf8');
  }

  issue(object: string, now = Date.now() / 1000): string {
    const payload = Buffer.from(
      JSON.stringify({ o: object, e: Math.floor(now) + this.lifetimeSeconds }),
    ).toString('base64url');
    return `${payload}.${this.mac(payload)}`;
  }

  /** The token's grant, 'expired', or undefined for anything this service did not sign. */
  read(token: string, now = Date.now() / 1000): AccessToken | 'expired' | undefined {
    const dot = token.indexOf('.');
    if (dot <= 0 || token.length > 2048) return undefined;
    const payload = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.mac(payload), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const { o, e } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
      o: string;
      e: number;
    };
    return e > now ? { object: o, exp: e } : 'expired';
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }
}
