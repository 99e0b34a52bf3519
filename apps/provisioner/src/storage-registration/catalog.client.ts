import { Inject, Injectable } from '@nestjs/common';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';

/** The body of the catalog's POST /api/registrations (its StorageRegistrationBody). */
export interface StorageRegistration {
  import_id: string;
  dataset: { accession?: string; title: string; project: string };
  storage: {
    platform: string;
    location: string;
    /** The copy's total bytes (the provenance's totals). */
    bytes?: number;
    /** SHA-256 (lowercase hex) of the copy's stored manifest of per-file SHA-256s. */
    manifest_sha256?: string;
    /** The dataset as a GA4GH DRS compound object, when this provisioner serves DRS. */
    drs_uri?: string;
  };
  transfer?: { partner: string; source: string; submission: string; date: string };
}

/** What the catalog answered a registration with. */
export interface RegistrationAnswer {
  accession: string;
  /** The call added the dataset, its storage row or its transfer (else all were there). */
  changed: boolean;
}

/** The catalog said no (a 4xx other than 408/429): retrying the same request cannot help. */
export class CatalogRefusedError extends Error {
  constructor(
    readonly status: number,
    /** The catalog's `more.reason` (unknown_project, …), else `http_<status>`. */
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** The catalog could not answer (unreachable, time-out, 5xx, 408, 429): worth retrying. */
export class CatalogUnavailableError extends Error {}

/** Statuses that say "later", not "no". */
const RETRYABLE_4XX = new Set([408, 425, 429]);

/**
 * The provisioner's only call to the catalog, with the registration key. The key travels in a
 * header only, never in a URL or a log line.
 */
@Injectable()
export class CatalogClient {
  constructor(@Inject(PROVISIONER_SETTINGS) private readonly settings: ProvisionerSettings) {}

  async register(registration: StorageRegistration): Promise<RegistrationAnswer> {
    const target = this.settings.catalogRegistration;
    if (target === null) throw new CatalogUnavailableError('catalog registration is off');
    let res: Response;
    try {
      res = await fetch(`${target.url}/api/registrations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': target.apiKey },
        body: JSON.stringify(registration),
        signal: AbortSignal.timeout(this.settings.CATALOG_TIMEOUT_MS),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      throw new CatalogUnavailableError(
        `catalog unreachable: ${cause ?? (error as Error).name}: ${(error as Error).message}`,
      );
    }
    const body = (await res.json().catch(() => null)) as {
      accession?: unknown;
      dataset_created?: unknown;
      storage_created?: unknown;
      transfer_created?: unknown;
      description?: unknown;
      more?: { reason?: unknown };
    } | null;
    if (res.ok && typeof body?.accession === 'string')
      return {
        accession: body.accession,
        changed:
          body.dataset_created === true ||
          body.storage_created === true ||
          body.transfer_created === true,
      };
    const description = typeof body?.description === 'string' ? body.description : res.statusText;
    if (res.status >= 400 && res.status < 500 && !RETRYABLE_4XX.has(res.status)) {
      const reason =
        typeof body?.more?.reason === 'string' ? body.more.reason : `http_${res.status}`;
      throw new CatalogRefusedError(
        res.status,
        reason,
        `catalog refused (${res.status}): ${description}`,
      );
    }
    throw new CatalogUnavailableError(`catalog answered ${res.status}: ${description}`);
  }
}
