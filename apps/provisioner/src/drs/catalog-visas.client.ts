import { LOGIN_SUBJECT_HEADER } from '@app/auth';

/** The catalog could not say (unreachable, time-out, 5xx): DRS answers 503, never "allowed". */
export class CatalogVisasUnavailableError extends Error {}

/** The catalog refused the login token (401/403): the caller is not who the token says. */
export class CatalogRefusedLoginError extends Error {}

/**
 * The subject cannot be named in the catalog's route: a dot segment (`.`, `..`), which every
 * URL parser resolves, `%2e%2e` included, so that the request would reach another route. No
 * person of an identity provider is called that: the login (or visa) is refused.
 */
export class UnnamableSubjectError extends Error {}

/**
 * `value` as one path segment that no URL parser can turn into another route: percent-encoded,
 * and never a dot segment (an encoded dot is still one, per the URL Standard), which is refused.
 */
export function pathSegment(value: string): string {
  if (value === '' || value === '.' || value === '..') {
    throw new UnnamableSubjectError(`${JSON.stringify(value)} cannot be a path segment`);
  }
  return encodeURIComponent(value);
}

/** The longest passport read from the catalog (1,000 visas are about a megabyte). */
const MAX_PASSPORT_BYTES = 8 * 1024 * 1024;

/**
 * Reads a person's current visas from the catalog's GET /api/ga4gh/permissions/{subject}: with
 * the broker key (the grant check of a passport), or with the person's own login token (the
 * bearer exchange: the catalog verifies the token, and answers only for its own subject).
 * Credentials travel in headers only, never in a URL or a log line.
 */
export class CatalogVisasClient {
  constructor(
    private readonly catalogUrl: string,
    private readonly brokerKey: string,
    private readonly timeoutMs: number,
  ) {}

  /** The visas (compact JWS) of the subject's passport, as the catalog signs them now. */
  async visasOf(subject: string, login?: string): Promise<string[]> {
    // A login is forwarded beside the broker key: the catalog verifies it and answers for its
    // subject only, and takes a refused login for the caller's, not for a guess from this
    // service's address (which all DRS users share).
    const headers: Record<string, string> =
      login === undefined
        ? { 'x-api-key': this.brokerKey }
        : { 'x-api-key': this.brokerKey, authorization: `Bearer ${login}` };
    const path = `/api/ga4gh/permissions/${pathSegment(subject)}`;
    let res: Response;
    try {
      res = await fetch(`${this.catalogUrl}${path}`, {
        headers,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new CatalogVisasUnavailableError(`catalog unreachable: ${(error as Error).message}`);
    }
    if (login !== undefined && (res.status === 401 || res.status === 403)) {
      await res.body?.cancel();
      throw new CatalogRefusedLoginError(`the catalog refused the login (${res.status})`);
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new CatalogVisasUnavailableError(`catalog answered ${res.status}`);
    }
    // Only an answer for the verified login counts: a catalog that ignored the login would have
    // answered with the broker's rights, for whatever subject the token named.
    if (login !== undefined && res.headers.get(LOGIN_SUBJECT_HEADER) !== pathSegment(subject)) {
      await res.body?.cancel();
      throw new CatalogVisasUnavailableError('the catalog did not verify the login');
    }
    const length = Number(res.headers.get('content-length') ?? 0);
    if (length > MAX_PASSPORT_BYTES) {
      await res.body?.cancel();
      throw new CatalogVisasUnavailableError('catalog passport too large');
    }
    const body = (await res.json().catch(() => null)) as { ga4gh_passport_v1?: unknown } | null;
    const visas = body?.ga4gh_passport_v1;
    if (!Array.isArray(visas))
      throw new CatalogVisasUnavailableError('catalog passport unreadable');
    return visas.filter((visa): visa is string => typeof visa === 'string');
  }
}
