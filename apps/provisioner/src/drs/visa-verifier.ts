import { createHash } from 'node:crypto';
import {
  ASYMMETRIC_JWS_ALGORITHMS,
  type ControlledAccessGrant,
  isControlledAccessGrant,
} from '@app/auth';
import {
  compactVerify,
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  type JWTPayload,
} from 'jose';

/** What a verified visa grants: `sub` may use the dataset with accession `value` until `exp`. */
export interface VerifiedVisa {
  sub: string;
  value: string;
  exp: number;
  /** When the visa was signed (epoch seconds; 0 when it does not say). */
  iat: number;
  /** The visa's id (`jti`), when it has one: what the trail names as the grant of an access. */
  jti?: string;
}

/** Why a visa was refused (audited with the refusal). */
export type VisaRefusal =
  | 'unparsable'
  | 'untrusted jku'
  | 'wrong issuer'
  | 'signature'
  | 'expired'
  | 'not yet valid'
  | 'not a ControlledAccessGrants visa'
  | 'conditions';

/** Clock skew allowed on `iat` and `asserted`. */
const SKEW_SECONDS = 60;
/** Verified visas remembered (by the SHA-256 of the token) until they expire. */
const MAX_REMEMBERED = 20_000;

/**
 * Verifies GA4GH visas as a clearinghouse does (AAI 1.2, "Visa Format" and "Token
 * Validation"): the `jku` must be the one allow-listed, the signature must verify with the key
 * its `kid` names in that JWKS, `iss` must be the trusted issuer, `exp` in the future, the visa a
 * `ControlledAccessGrants` with a string `value` and no `conditions` (which this service cannot
 * evaluate, so it must not ignore them). A verified visa is remembered until it expires, so a
 * passport sent again costs no signature check.
 */
export class VisaVerifier {
  private readonly keys: ReturnType<typeof createRemoteJWKSet>;
  private readonly remembered = new Map<string, VerifiedVisa>();

  constructor(
    private readonly issuer: string,
    private readonly jku: string,
    jwksTimeoutMs = 5000,
  ) {
    this.keys = createRemoteJWKSet(new URL(jku), { timeoutDuration: jwksTimeoutMs });
  }

  async verify(jws: string, now = Date.now() / 1000): Promise<VerifiedVisa | VisaRefusal> {
    const digest = createHash('sha256').update(jws).digest('base64url');
    const known = this.remembered.get(digest);
    if (known !== undefined) return known.exp > now ? known : 'expired';
    let header: ReturnType<typeof decodeProtectedHeader>;
    let claims: JWTPayload;
    try {
      header = decodeProtectedHeader(jws);
      claims = decodeJwt(jws);
    } catch {
      return 'unparsable';
    }
    // Checked before any key is fetched: an untrusted jku is never dereferenced.
    if (header.jku !== this.jku) return 'untrusted jku';
    if (claims.iss !== this.issuer) return 'wrong issuer';
    const refusal = contentRefusal(claims, now);
    if (refusal !== undefined) return refusal;
    try {
      await compactVerify(jws, this.keys, { algorithms: ASYMMETRIC_JWS_ALGORITHMS });
    } catch (error) {
      if (isUnavailable(error)) throw error;
      return 'signature';
    }
    const visa = claims.ga4gh_visa_v1 as ControlledAccessGrant;
    const verified = {
      sub: claims.sub as string,
      value: visa.value,
      exp: claims.exp as number,
      iat: typeof claims.iat === 'number' ? claims.iat : 0,
      ...(typeof claims.jti === 'string' && claims.jti !== '' ? { jti: claims.jti } : {}),
    };
    this.remember(digest, verified, now);
    return verified;
  }

  private remember(digest: string, visa: VerifiedVisa, now: number): void {
    if (this.remembered.size >= MAX_REMEMBERED) {
      for (const [key, kept] of this.remembered) if (kept.exp <= now) this.remembered.delete(key);
      if (this.remembered.size >= MAX_REMEMBERED) {
        this.remembered.delete(this.remembered.keys().next().value as string);
      }
    }
    this.remembered.set(digest, visa);
  }
}

function contentRefusal(claims: JWTPayload, now: number): VisaRefusal | undefined {
  if (typeof claims.sub !== 'string' || claims.sub === '') return 'unparsable';
  if (typeof claims.exp !== 'number' || claims.exp <= now) return 'expired';
  if (typeof claims.iat === 'number' && claims.iat > now + SKEW_SECONDS) return 'not yet valid';
  const visa = claims.ga4gh_visa_v1;
  if (!isControlledAccessGrant(visa)) return 'not a ControlledAccessGrants visa';
  if (visa.asserted > now + SKEW_SECONDS) return 'not yet valid';
  if ('conditions' in visa) return 'conditions';
  return undefined;
}

/** The JWKS could not be fetched (network, time-out): a 503, not a forged visa. */
function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === 'ERR_JWKS_TIMEOUT' || code === 'ERR_JOSE_GENERIC' || error instanceof TypeError;
}
