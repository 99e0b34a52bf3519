import { createHash, createPrivateKey, createPublicKey, KeyObject, sign } from 'node:crypto';

export type VisaAlgorithm = 'RS256' | 'ES256';

/** A public key as /api/jwk lists it (RFC 7517): RSA `n`/`e` or EC `crv`/`x`/`y`. */
export interface PublicJwk {
  kty: string;
  kid: string;
  alg: VisaAlgorithm;
  use: 'sig';
  [member: string]: string;
}

/** A key of the visa issuer: its public JWK and, when it may sign, the private key. */
export interface VisaSigningKey {
  kid: string;
  alg: VisaAlgorithm;
  publicJwk: PublicJwk;
  privateKey?: KeyObject;
}

/** RSA keys shorter than this are refused (NIST SP 800-131A: 2048 bits at least). */
const MIN_RSA_BITS = 2048;

/**
 * Reads a PEM (PKCS#8, PKCS#1, SEC1 or SPKI) or a JWK, private or public, and checks it fits
 * the algorithm: RS256 needs RSA of 2048 bits or more, ES256 an EC key on P-256. The `kid` is
 * the JWK's own, else the key's RFC 7638 thumbprint, so it is stable across restarts and
 * replicas without being configured.
 */
export function readVisaKey(text: string, alg: VisaAlgorithm, origin: string): VisaSigningKey {
  const trimmed = text.trim();
  let privateKey: KeyObject | undefined;
  let publicKey: KeyObject;
  let kid: string | undefined;
  try {
    if (trimmed.startsWith('{')) {
      const jwk = JSON.parse(trimmed) as Record<string, unknown>;
      kid = typeof jwk.kid === 'string' && jwk.kid !== '' ? jwk.kid : undefined;
      if (typeof jwk.d === 'string') privateKey = createPrivateKey({ key: jwk, format: 'jwk' });
      publicKey = createPublicKey(privateKey ?? { key: jwk, format: 'jwk' });
    } else if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(trimmed)) {
      privateKey = createPrivateKey(trimmed);
      publicKey = createPublicKey(privateKey);
    } else {
      publicKey = createPublicKey(trimmed);
    }
  } catch (error) {
    throw new Error(`${origin}: not a PEM or JWK key (${(error as Error).message})`);
  }
  checkKind(publicKey, alg, origin);
  const members = publicKey.export({ format: 'jwk' }) as Record<string, string>;
  kid ??= thumbprint(members);
  return {
    kid,
    alg,
    privateKey,
    publicJwk: { ...members, kid, alg, use: 'sig' } as PublicJwk,
  };
}

function checkKind(key: KeyObject, alg: VisaAlgorithm, origin: string): void {
  const details = key.asymmetricKeyDetails ?? {};
  if (alg === 'RS256') {
    if (key.asymmetricKeyType !== 'rsa' || (details.modulusLength ?? 0) < MIN_RSA_BITS)
      throw new Error(`${origin}: RS256 needs an RSA key of at least ${MIN_RSA_BITS} bits`);
  } else if (key.asymmetricKeyType !== 'ec' || details.namedCurve !== 'prime256v1') {
    throw new Error(`${origin}: ES256 needs an EC key on P-256`);
  }
}

/** RFC 7638: SHA-256 of the required members in lexicographic order, base64url. */
function thumbprint(jwk: Record<string, string>): string {
  const required = jwk.kty === 'RSA' ? ['e', 'kty', 'n'] : ['crv', 'kty', 'x', 'y'];
  const canonical = JSON.stringify(Object.fromEntries(required.map((name) => [name, jwk[name]])));
  return createHash('sha256').update(canonical).digest('base64url');
}

/**
 * A compact JWS (RFC 7515) of exactly this header and these claims: each serialised with
 * JSON.stringify in the order given, so the same input always gives the same bytes (RS256 is
 * deterministic; ES256 signatures are randomised but verify the same). Synchronous: one RSA
 * signature costs about a millisecond of CPU, and callers sign in batches.
 */
export function signCompact(
  header: Record<string, unknown>,
  claims: Record<string, unknown>,
  key: KeyObject,
  alg: VisaAlgorithm,
): string {
  const input = `${encode(header)}.${encode(claims)}`;
  const signature =
    alg === 'RS256'
      ? sign('sha256', Buffer.from(input), key)
      : sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

function encode(part: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(part)).toString('base64url');
}
