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
 * The provisioner's calls to the catalog with the registration key: registrations and trail
 * events. The key travels in a header only, never in a URL or a log line.
 */
@Injectable()
export class CatalogClient {
  constructor(@Inject(PROVISIONER_SETTINGS) private readonly settings: ProvisionerSettings) {}

  async register(registration: StorageRegistration): Promise<RegistrationAnswer> {
    const body = await this.post('/api/registrations', registration);
    if (typeof body?.accession === 'string')
      return {
        accession: body.accession,
        changed:
          body.dataset_created === true ||
          body.storage_created === true ||
          body.transfer_created === true,
      };
    throw new CatalogUnavailableError('catalog answered without an accession');
  }

  /** `POST /api/trail/events`: the events chained in the order given (idempotent by id). */
  async reportEvents(events: unknown[]): Promise<{ recorded: number; already: number }> {
    const body = await this.post('/api/trail/events', { events });
    if (typeof body?.recorded === 'number' && typeof body.already === 'number') {
      return { recorded: body.recorded, already: body.already };
    }
    throw new CatalogUnavailableError('catalog answered without a count of recorded events');
  }

  /**
   * One POST: the parsed answer of a 2xx; CatalogRefusedError for a 4xx that says "no";
   * CatalogUnavailableError for anything worth retrying.
   */
  private async post(path: string, payload: unknown): Promise<Record<string, unknown> | null> {
    const target = this.settings.catalogRegistration;
    if (target === null) throw new CatalogUnavailableError('catalog registration is off');
    let res: Response;
    try {
      res = await fetch(`${target.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': target.apiKey },
        body: JSON.stringify(payload),
        signal: AbortSignal.timeout(this.settings.CATALOG_TIMEOUT_MS),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      throw new CatalogUnavailableError(
        `catalog unreachable: ${cause ?? (error as Error).name}: ${(error as Error).message}`,
      );
    }
    const body = (await res.json().catch(() => null)) as
      | ({
          description?: unknown;
          more?: { reason?: unknown };
        } & Record<string, unknown>)
      | null;
    if (res.ok) return body;
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
