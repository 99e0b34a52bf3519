import { Inject, Injectable, Logger } from '@nestjs/common';
import { createRemoteJWKSet, errors, JWTPayload, jwtVerify } from 'jose';
import { ASYMMETRIC_JWS_ALGORITHMS, type BearerTokenResolver, type Principal } from '@app/auth';
import { ServiceUnavailableError, UnauthorizedError } from '@app/errors';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { UsersRepository } from '../users/users.repository';

const CLOCK_TOLERANCE_SECONDS = 30;
/** Signing keys are refetched at least this often even when every kid is known. */
const JWKS_MAX_AGE_MS = 10 * 60_000;

/**
 * Whom a token must be for. Keycloak puts the client a token was issued to in `azp` and,
 * in a stock realm, only `account` in `aud` (the audience of the account console's roles), so
 * by default a token counts as ours when it was issued to our client (`azp`) or names it in
 * `aud`. An explicitly configured audience is checked strictly on `aud` alone (the realm then
 * needs an audience mapper on the client users log in with).
 */
type Recipient = { kind: 'client'; clientId: string } | { kind: 'audience'; audience: string };

interface Verifier {
  keys: ReturnType<typeof createRemoteJWKSet>;
  issuer: string;
  recipient: Recipient;
}

const INVALID = 'Invalid or expired access token';
const CHALLENGE = 'Bearer error="invalid_token"';

/** Keycloak's `typ` of access tokens (TokenUtil.TOKEN_TYPE_BEARER), compared ignoring case. */
const ACCESS_TOKEN_TYPE = 'bearer';

/**
 * Logs people in with an access token of the identity provider (`Authorization: Bearer`):
 * signature against the realm's JWKS (cached; refetched on an unknown kid, at most once per
 * cool-down), issuer, recipient (see `Recipient`) and expiry. `typ` must be `Bearer`, compared
 * ignoring case as Keycloak's own TokenVerifier does (a client may ask for lower case), so
 * Keycloak's ID tokens (`ID`, whose `aud` is the client), refresh and offline tokens
 * (`Refresh`, `Offline`), DPoP-bound tokens and tokens without a type are refused. A token
 * whose subject belongs to a deactivated catalog user is refused too.
 */
@Injectable()
export class IdpBearerTokenResolver implements BearerTokenResolver {
  private readonly logger = new Logger(IdpBearerTokenResolver.name);
  private readonly verifier?: Verifier;

  constructor(
    @Inject(CATALOG_SETTINGS) settings: CatalogSettings,
    private readonly users: UsersRepository,
  ) {
    const realmUrl = settings.idpRealmUrl;
    const recipient: Recipient | undefined =
      settings.IDP_AUDIENCE !== undefined
        ? { kind: 'audience', audience: settings.IDP_AUDIENCE }
        : settings.IDP_CLIENT_ID !== undefined
          ? { kind: 'client', clientId: settings.IDP_CLIENT_ID }
          : undefined;
    if (realmUrl === undefined || recipient === undefined) return;
    this.verifier = {
      keys: createRemoteJWKSet(new URL(`${realmUrl}/protocol/openid-connect/certs`), {
        timeoutDuration: settings.IDP_TIMEOUT_MS,
        cooldownDuration: settings.IDP_JWKS_COOLDOWN_MS,
        cacheMaxAge: JWKS_MAX_AGE_MS,
      }),
      issuer: settings.IDP_ISSUER ?? realmUrl,
      recipient,
    };
  }

  async resolve(token: string): Promise<Principal | null> {
    if (this.verifier === undefined) {
      throw new UnauthorizedError(
        'Access tokens are not accepted: no identity provider is configured',
      );
    }
    const payload = await this.verify(this.verifier, token);
    const subject = payload.sub;
    if (typeof subject !== 'string' || subject === '')
      throw new UnauthorizedError(INVALID, CHALLENGE);
    if (typeof payload.typ !== 'string' || payload.typ.toLowerCase() !== ACCESS_TOKEN_TYPE)
      throw new UnauthorizedError(INVALID, CHALLENGE);
    if (!isFor(this.verifier.recipient, payload)) throw new UnauthorizedError(INVALID, CHALLENGE);
    if ((await this.users.isActiveBySubject(subject)) === false)
      throw new UnauthorizedError(INVALID, CHALLENGE);
    const username =
      typeof payload.preferred_username === 'string' ? payload.preferred_username : subject;
    return { kind: 'bearer', id: subject, name: username, canWrite: false };
  }

  private async verify(verifier: Verifier, token: string): Promise<JWTPayload> {
    try {
      const { payload } = await jwtVerify(token, verifier.keys, {
        issuer: verifier.issuer,
        // Keycloak signs with RS256 by default; any asymmetric algorithm is fine, HMAC never is.
        algorithms: ASYMMETRIC_JWS_ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['exp', 'sub'],
      });
      return payload;
    } catch (error) {
      if (keysUnavailable(error)) {
        this.logger.warn({ err: error }, 'identity-provider signing keys unavailable');
        throw new ServiceUnavailableError('Identity provider unavailable', {
          reason: 'signing keys could not be fetched',
        });
      }
      throw new UnauthorizedError(INVALID, CHALLENGE);
    }
  }
}

function isFor(recipient: Recipient, payload: JWTPayload): boolean {
  const audiences = typeof payload.aud === 'string' ? [payload.aud] : (payload.aud ?? []);
  if (recipient.kind === 'audience') return audiences.includes(recipient.audience);
  return payload.azp === recipient.clientId || audiences.includes(recipient.clientId);
}

/**
 * Fetching the key set failed (network, time-out, bad answer) as opposed to the token being
 * bad: jose raises its generic JOSEError or a plain fetch error for the former.
 */
function keysUnavailable(error: unknown): boolean {
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) return true;
  if (!(error instanceof errors.JOSEError)) return true;
  return error.code === 'ERR_JOSE_GENERIC';
}
