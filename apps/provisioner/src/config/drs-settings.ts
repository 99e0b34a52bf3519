/**
 * The DRS settings group: everything the DRS service and its collaborators (the bytes
 * controller, the authoriser, access URLs, stored datasets, the catalog visas client, the visa
 * verifier) read, derived once from the provisioner settings (ProvisionerSettings.drsSettings)
 * and provided by the DRS module as DRS_SETTINGS. No DRS file reads a DRS_* setting itself.
 * This file imports nothing, so tracing a DRS read never leads into the whole settings class.
 */

/** Injects the DRS settings group (provided by DrsModule). */
export const DRS_SETTINGS = Symbol('DRS_SETTINGS');

/** The DRS service's addresses and the visa issuer it trusts (set with DRS_PUBLIC_URL). */
export interface DrsEndpoint {
  publicUrl: string;
  /** The host of `drs://<host>/<id>` URIs. */
  host: string;
  issuer: string;
  jku: string;
  /** The catalog asked for a person's current visas, and the broker key it is asked with. */
  catalogUrl: string;
  brokerKey: string;
  bearerIssuer?: string;
}

/** The keys of access URLs: one signs; each of them (it, the next, the previous) verifies. */
export interface AccessUrlKeys {
  signing?: string;
  next?: string;
  previous?: string;
}

export interface DrsSettings {
  /** Null when DRS_PUBLIC_URL is unset: DRS is off. */
  endpoint: DrsEndpoint | null;
  /** DRS_URL_SIGNING_KEY, DRS_URL_NEXT_SIGNING_KEY, DRS_URL_PREVIOUS_SIGNING_KEY. */
  accessUrlKeys: AccessUrlKeys;
  /** DRS_ACCESS_URL_SECONDS: how long an access URL (ours or the store's) works. */
  accessUrlSeconds: number;
  /** DRS_GRANT_CHECK_SECONDS: how long the catalog's answer about a person's grants is used. */
  grantCheckSeconds: number;
  /** DRS_MAX_VISAS: visas one request's passports may carry in all. */
  maxVisas: number;
  /** DRS_MAX_BULK_REQUEST_LENGTH: object ids one bulk request may name. */
  maxBulkRequestLength: number;
  /** DRS_MAX_DATASET_FILES: files a dataset may have to be served. */
  maxDatasetFiles: number;
  /** nginx's internal location when nginx sends the bytes (DRS_BYTES_OFFLOAD=nginx), else null. */
  bytesOffloadPrefix: string | null;
  /**
   * DRS_PLAINTEXT_DOWNLOADS=on: an object stored encrypted is sent decrypted to a reader who sends
   * no Crypt4GH key (accepted only with an https:// DRS_PUBLIC_URL); off, such a read is a 400.
   */
  plaintextDownloads: boolean;
  /** CATALOG_TIMEOUT_MS: the time limit of a call for visas and of a JWKS fetch. */
  catalogTimeoutMs: number;
}
