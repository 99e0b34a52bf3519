import {
  createRemoteJWKSet,
  compactVerify,
  decodeJwt,
  decodeProtectedHeader,
  type JWTPayload,
  type ProtectedHeaderParameters,
} from 'jose';

/** A visa the broker took into a passport. */
export interface AcceptedVisa {
  header: ProtectedHeaderParameters;
  claims: JWTPayload & { ga4gh_visa_v1: Record<string, unknown> };
  /** The name of the trusted signer its jku belongs to. */
  signer: string;
}

/** Why the broker dropped a visa (for assertions). */
export type Refusal =
  'unparsable' | 'header' | 'visa value' | 'expired' | 'untrusted jku' | 'signature';

/**
 * A GA4GH passport broker's intake of a claim repository's visas, re-created from
 * CESNET/perun-aai-ga4gh-passport-broker src/main/java/cz/muni/ics/ga4gh/base/Utils.java
 * (`parseVisa`: `checkVisaHeader` wants `jku`, `typ` and a non-blank `kid`; `checkVisaValue`
 * wants a non-empty `ga4gh_visa_v1` with `type`, `asserted`, `value` and `source`;
 * `verifyVisa`: `exp` after now, `jku` among the configured signers, the key named by `kid`
 * fetched from that JWKS and an RSA signature check) and
 * src/main/java/cz/muni/ics/ga4gh/service/impl/brokers/Ga4ghBroker.java
 * (`callPermissionsJwtAPI`: non-string entries skipped, refused visas skipped). Signatures are
 * checked with jose against the JWKS fetched from the visa's jku.
 */
export class PassportBroker {
  private readonly keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();
  readonly refusals: Refusal[] = [];

  /** `signers`: trusted jku → signer name (the broker's `passport-repositories[].jwks`). */
  constructor(private readonly signers: Record<string, string>) {
    for (const jku of Object.keys(signers)) {
      // No cache between reads, so a test sees the key set as it is now.
      this.keySets.set(
        jku,
        createRemoteJWKSet(new URL(jku), { cacheMaxAge: 0, cooldownDuration: 0 }),
      );
    }
  }

  /** The visas of a `{"ga4gh_passport_v1": [...]}` answer the broker would keep. */
  async accept(body: unknown, now = Date.now() / 1000): Promise<AcceptedVisa[]> {
    this.refusals.length = 0;
    const visas = (body as { ga4gh_passport_v1?: unknown }).ga4gh_passport_v1;
    if (!Array.isArray(visas)) return [];
    const accepted: AcceptedVisa[] = [];
    for (const visa of visas) {
      if (typeof visa !== 'string') continue;
      const verdict = await this.verify(visa, now);
      if (typeof verdict === 'string') this.refusals.push(verdict);
      else accepted.push(verdict);
    }
    return accepted;
  }

  private async verify(jws: string, now: number): Promise<AcceptedVisa | Refusal> {
    let header: ProtectedHeaderParameters;
    let claims: JWTPayload;
    try {
      header = decodeProtectedHeader(jws);
      claims = decodeJwt(jws);
    } catch {
      return 'unparsable';
    }
    if (typeof header.jku !== 'string' || typeof header.typ !== 'string' || !hasText(header.kid))
      return 'header';
    const visa = claims.ga4gh_visa_v1;
    if (visa === null || typeof visa !== 'object' || Object.keys(visa).length === 0)
      return 'visa value';
    if (!['type', 'asserted', 'value', 'source'].every((key) => key in visa)) return 'visa value';
    if (typeof claims.exp !== 'number' || claims.exp <= now) return 'expired';
    const signer = this.signers[header.jku];
    const keys = this.keySets.get(header.jku);
    if (signer === undefined || keys === undefined) return 'untrusted jku';
    try {
      // RSASSAVerifier: RSA signatures only.
      await compactVerify(jws, keys, { algorithms: ['RS256', 'RS384', 'RS512'] });
    } catch {
      return 'signature';
    }
    return {
      header,
      claims: claims as AcceptedVisa['claims'],
      signer,
    };
  }
}

function hasText(value: unknown): boolean {
  return typeof value === 'string' && value.trim() !== '';
}
