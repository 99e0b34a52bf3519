import {
  createHmac,
  createSecretKey,
  type KeyObject,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import { SIGNED_TOKEN_SHAPE, type UrlTokens } from '@app/auth';
import type { AccessUrlKeys } from '../config/drs-settings';

/**
 * The route of access URLs, `/drs-bytes/<token>/<name>`. Its token is a credential: logs and
 * spans redact it (ACCESS_URL_TOKENS, given to the logging and telemetry set-up), in that
 * route's segment and wherever something of a token's shape stands.
 */
export const ACCESS_URL_ROUTE = 'drs-bytes';
export const ACCESS_URL_TOKENS: UrlTokens = {
  routes: [`/${ACCESS_URL_ROUTE}/`],
  shape: SIGNED_TOKEN_SHAPE,
};

/** What an access token lets its holder read: one object, for one person, until `exp`. */
export interface AccessToken {
  object: string;
  /** Who the URL was issued to: their grant is checked again while the bytes are read. */
  subject: string;
  /** Epoch seconds. */
  exp: number;
}

/** A token exactly as this service writes it: two canonical base64url parts, a 32-byte MAC. */
const TOKEN = /^([A-Za-z0-9_-]{16,2000})\.([A-Za-z0-9_-]{43})$/;

/**
 * Short-lived tokens bound to one object and one person: `<payload>.<HMAC-SHA256 of it>`, both
 * base64url, the payload `{o: object id, s: subject, e: expiry}`. The key is
 * DRS_URL_SIGNING_KEY (the same on every replica) or a random one per process; a token made
 * with DRS_URL_NEXT_SIGNING_KEY or DRS_URL_PREVIOUS_SIGNING_KEY is accepted too, so the key
 * rotates without a URL failing (docs/decisions/drs-access-url-keys.md). A token names an
 * object id, never a path: the path is resolved from the dataset's provenance when read.
 * Decoding is strict: one grant has one token string, nothing appended or re-spelt passes.
 */
export class AccessUrls {
  /**
   * As KeyObjects, made once: given a Buffer, Node 24's createHmac first tries it as a KeyObject
   * and a CryptoKey, each try a thrown and caught error, several times the MAC's own cost (a
   * bulk decision signs a thousand URLs).
   */
  private readonly signing: KeyObject;
  private readonly verifying: KeyObject[];

  constructor(
    keys: AccessUrlKeys,
    private readonly lifetimeSeconds: number,
  ) {
    this.signing = createSecretKey(
      keys.signing === undefined ? randomBytes(32) : Buffer.from(keys.signing, 'utf8'),
    );
    this.verifying = [
      this.signing,
      ...[keys.next, keys.previous]
        .filter((key): key is string => key !== undefined)
        .map((key) => createSecretKey(Buffer.from(key, 'utf8'))),
    ];
  }

  issue(object: string, subject: string, now = Date.now() / 1000): string {
    const payload = Buffer.from(
      JSON.stringify({ o: object, s: subject, e: Math.floor(now) + this.lifetimeSeconds }),
    ).toString('base64url');
    return `${payload}.${mac(this.signing, payload)}`;
  }

  /** The token's grant, 'expired', or undefined for anything this service did not sign. */
  read(token: string, now = Date.now() / 1000): AccessToken | 'expired' | undefined {
    const match = TOKEN.exec(token);
    if (match === null) return undefined;
    const [, payload, given] = match;
    // Only the canonical spelling (base64url has several for the last character's spare bits).
    const givenMac = Buffer.from(given, 'base64url');
    if (givenMac.toString('base64url') !== given) return undefined;
    const signed = this.verifying.some((key) =>
      timingSafeEqual(givenMac, Buffer.from(mac(key, payload), 'base64url')),
    );
    if (!signed) return undefined;
    const claims = parsePayload(payload);
    if (claims === undefined) return undefined;
    return claims.exp > now ? claims : 'expired';
  }
}

function mac(key: KeyObject, payload: string): string {
  return createHmac('sha256', key).update(payload).digest('base64url');
}

function parsePayload(payload: string): AccessToken | undefined {
  const bytes = Buffer.from(payload, 'base64url');
  if (bytes.toString('base64url') !== payload) return undefined;
  let claims: unknown;
  try {
    claims = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  const { o, s, e } = (claims ?? {}) as { o?: unknown; s?: unknown; e?: unknown };
  if (typeof o !== 'string' || typeof s !== 'string' || typeof e !== 'number') return undefined;
  return { object: o, subject: s, exp: e };
}
