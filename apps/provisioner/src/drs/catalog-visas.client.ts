/** The catalog could not say (unreachable, time-out, 5xx): DRS answers 503, never "allowed". */
export class CatalogVisasUnavailableError extends Error {}

/** The catalog refused the login token (401/403): the caller is not who the token says. */
export class CatalogRefusedLoginError extends Error {}

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
    const headers: Record<string, string> =
      login === undefined ? { 'x-api-key': this.brokerKey } : { authorization: `Bearer ${login}` };
    let res: Response;
    try {
      res = await fetch(`${this.catalogUrl}/api/ga4gh/permissions/${encodeURIComponent(subject)}`, {
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
