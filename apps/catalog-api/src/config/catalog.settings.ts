import {
  IsEmail,
  IsIn,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  MinLength,
  Validate,
  ValidateIf,
} from 'class-validator';
import { hostname } from 'node:os';
import {
  BaseUrlSetting,
  BooleanSetting,
  FrontDoorSettings,
  IntegerSetting,
  IsIpAllowList,
  loadSettings,
  LOG_LEVELS,
  RealSecret,
  urlPassword,
} from '@app/platform';
import { IsCronOrOff } from './setting-validators';

/**
 * Every setting of catalog-api, validated once at boot (see .env.example for each one); the
 * front-door settings (TRUSTED_PROXIES, AUTH_FAILURE_*) come from FrontDoorSettings.
 */
export class CatalogSettings extends FrontDoorSettings {
  @IntegerSetting(1, 65535)
  PORT = 3000;

  @IsString()
  HOST = '0.0.0.0';

  @IsUrl({ protocols: ['postgres', 'postgresql'], require_tld: false, require_protocol: true })
  @RealSecret(urlPassword)
  DATABASE_URL!: string;

  /**
   * The database itself, when DATABASE_URL names a pooler in transaction mode (PgBouncer): what
   * needs a session of its own (migrations and their lock, session advisory locks, the version
   * listener's LISTEN) connects here. Unset: DATABASE_URL, which must then be the database itself
   * (a transaction-mode pooler there is refused at start: database/session-database.ts).
   */
  @IsOptional()
  @IsUrl({ protocols: ['postgres', 'postgresql'], require_tld: false, require_protocol: true })
  @RealSecret(urlPassword)
  DATABASE_DIRECT_URL?: string;

  /** Size of the Postgres connection pool of one replica. */
  @IntegerSetting(1, 200)
  DATABASE_POOL_SIZE = 10;

  /**
   * Longest a statement may run before PostgreSQL cancels it: the session's limit on a
   * connection of our own, each transaction's (SET LOCAL) behind a pooler (typeorm-options.ts).
   */
  @IntegerSetting(100, 3_600_000)
  DATABASE_STATEMENT_TIMEOUT_MS = 30_000;

  /**
   * Learn the catalog data version from Postgres notifications (LISTEN, on the session URL)
   * instead of a query per read, and answer repeated reads from memory. Off, every read asks the
   * database for the version.
   */
  @BooleanSetting()
  CATALOG_VERSION_LISTEN = true;

  /**
   * Answer a repeated read before Express and Nest see it (read-cache/fast-reads.ts). Off, every
   * read takes the full pipeline and its cache: the benchmark measures both ways.
   */
  @BooleanSetting()
  FAST_READS = true;

  /** Run pending migrations at start (under an advisory lock). Off in Kubernetes: a Job runs them. */
  @BooleanSetting()
  MIGRATIONS_RUN = true;

  /** Unset = the global key is disabled. */
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'GLOBAL_API_KEY must be at least 32 characters long' })
  @RealSecret()
  GLOBAL_API_KEY?: string;

  /**
   * SHA-256 (hex) of each registration key, comma-separated (two during a rotation): a
   * registration key may call POST /api/registrations and nothing else. Only the hash is
   * configured here; the key itself lives with the provisioner (CATALOG_API_KEY).
   * Unset = no registration key works.
   */
  @IsOptional()
  @Matches(/^[0-9a-f]{64}(,[0-9a-f]{64})*$/, {
    message: 'REGISTRATION_API_KEY_SHA256 must be a comma list of hex SHA-256 digests',
  })
  REGISTRATION_API_KEY_SHA256?: string;

  /** Public base URL of this service, put in `source` on every exported record. */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true })
  @BaseUrlSetting()
  CATALOG_SOURCE?: string;

  @IntegerSetting(1024)
  MAX_BODY_BYTES = 10 * 1024 * 1024;

  /**
   * Body limit of the import routes (POST /api/partners, …/contracts) only. Parsing an import
   * takes about ten times its size in memory (docs/operations.md, memory): the default fits
   * 50,000 records of up to 640 bytes in one document within the pod's limit.
   */
  @IntegerSetting(1024)
  MAX_IMPORT_BODY_BYTES = 32 * 1024 * 1024;

  /**
   * Entries of each of the two response caches (the cached reads and the fast-read index).
   * Anonymous clients can make any number of distinct URLs: past this, the least recently
   * used entries go.
   */
  @IntegerSetting(1, 1_000_000)
  RESPONSE_CACHE_MAX_ENTRIES = 10_000;

  /** Everything each response cache holds (bodies, keys, headers, overhead), in bytes. */
  @IntegerSetting(1024 * 1024)
  RESPONSE_CACHE_MAX_BYTES = 64 * 1024 * 1024;

  /**
   * Entity tags kept for conditional GETs answered before the framework (the FAIR Data Point's
   * records; read-cache/entity-tags.ts): tags only, no bodies, so a crawl's 30,000 records fit
   * where the fast-read index keeps 10,000 answers. 0 keeps none (every 304 the index does not
   * hold goes through the framework).
   */
  @IntegerSetting(0, 1_000_000)
  ETAG_INDEX_MAX_ENTRIES = 50_000;

  /** Everything the entity-tag index holds (keys, tags, per-entry overhead), in bytes. */
  @IntegerSetting(1024 * 1024)
  ETAG_INDEX_MAX_BYTES = 24 * 1024 * 1024;

  @IsIn(LOG_LEVELS)
  LOG_LEVEL = 'info';

  /** The access-request webhook (POST /api/accessreq) answers 403 unless this is true. */
  @BooleanSetting()
  ACCESSREQ_INTEGRATION_ENABLED = false;

  /** Callers allowed on the webhook: addresses or CIDR ranges, comma-separated; `*` = any. */
  @Validate(IsIpAllowList)
  ACCESSREQ_ALLOWED_IP_ADDRESSES = '';

  /** Expiry of a granted access when the request has no end date. */
  @IntegerSetting(1, 36500)
  ACCESS_DEFAULT_EXPIRATION_DAYS = 90;

  /** When expired accesses are terminated (cron, UTC); `off` disables the job. */
  @Validate(IsCronOrOff)
  ACCESS_EXPIRY_CRON = '5 0 * * *';

  /** Base URL of the Keycloak server (e.g. https://idp.example.org or .../auth for old ones). */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  @BaseUrlSetting()
  IDP_URL?: string;

  @ValidateIf((s: CatalogSettings) => s.IDP_URL !== undefined)
  @IsString()
  @Matches(/^[^/?#]+$/, { message: 'IDP_REALM must be a realm name, not a path' })
  IDP_REALM?: string;

  /** Confidential client with the realm-management view-users role (client-credentials grant). */
  @IsOptional()
  @IsString()
  IDP_CLIENT_ID?: string;

  @ValidateIf((s: CatalogSettings) => s.IDP_CLIENT_ID !== undefined)
  @IsString({ message: 'IDP_CLIENT_SECRET is required when IDP_CLIENT_ID is set' })
  @RealSecret()
  IDP_CLIENT_SECRET?: string;

  /** Scheduled identity-provider sync (cron, UTC); `off` (the default) disables it. */
  @Validate(IsCronOrOff)
  IDP_SYNC_CRON = 'off';

  /** Time limit of every call to the identity provider. */
  @IntegerSetting(100, 60000)
  IDP_TIMEOUT_MS = 5000;

  /**
   * Audience a login token must carry in `aud` (checked strictly when set). Unset, a token
   * counts when issued to IDP_CLIENT_ID (`azp`) or naming it in `aud`: a stock Keycloak realm.
   */
  @IsOptional()
  @IsString()
  IDP_AUDIENCE?: string;

  /** Issuer a login token must carry (default: <IDP_URL>/realms/<IDP_REALM>). */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  IDP_ISSUER?: string;

  /** Least time between two fetches of the signing keys when a token names an unknown key. */
  @IntegerSetting(0, 3600000)
  IDP_JWKS_COOLDOWN_MS = 30000;

  /**
   * SHA-256 (hex) of each passport-broker key, comma-separated (two during a rotation): a
   * broker key may read GA4GH visas (GET /api/ga4gh/permissions/...) and nothing else.
   * Unset = no broker key works.
   */
  @IsOptional()
  @Matches(/^[0-9a-f]{64}(,[0-9a-f]{64})*$/, {
    message: 'GA4GH_BROKER_API_KEY_SHA256 must be a comma list of hex SHA-256 digests',
  })
  GA4GH_BROKER_API_KEY_SHA256?: string;

  /**
   * File holding the private key that signs GA4GH visas: PEM (PKCS#8, PKCS#1 or SEC1) or a
   * JWK (its `kid` is used; else the RFC 7638 thumbprint). Unset = the visa routes answer 503.
   * Needs CATALOG_SOURCE (the visas' `iss`, and `jku` = <CATALOG_SOURCE>/api/jwk).
   */
  @IsOptional()
  @IsString()
  @MinLength(1)
  GA4GH_VISA_KEY_FILE?: string;

  /**
   * The next signing key (PEM or JWK, private or public), published in /api/jwk but not yet
   * signing: step one of a rotation (docs/integrations.md, GA4GH visas).
   */
  @IsOptional()
  @IsString()
  @MinLength(1)
  GA4GH_VISA_NEXT_KEY_FILE?: string;

  /** RS256 (what the LS AAI broker verifies) or ES256; the key must be of that kind. */
  @IsIn(['RS256', 'ES256'])
  GA4GH_VISA_ALGORITHM: 'RS256' | 'ES256' = 'RS256';

  /** `exp` of a visa whose access has no end date: this many days after it was signed. */
  @IntegerSetting(1, 365)
  GA4GH_VISA_DEFAULT_LIFETIME_DAYS = 30;

  /** `source` of every visa: the granting institute's URL (default: CATALOG_SOURCE). */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true })
  @BaseUrlSetting()
  GA4GH_VISA_SOURCE?: string;

  /**
   * File holding the private key (PEM, PKCS#8; Ed25519 or EC P-256) that signs the audit
   * trail's checkpoints: the head before pruning, and the head an auditor's export carries.
   * Unset: pruning refuses and exports carry an unsigned head (docs/security.md, the trail).
   */
  @IsOptional()
  @IsString()
  @MinLength(1)
  AUDIT_SIGNING_KEY_FILE?: string;

  /**
   * Days the trail keeps an entry; `npm run catalog -- trail prune` deletes older ones after
   * signing a checkpoint of the last one deleted. Unset: entries are kept forever.
   */
  @IsOptional()
  @IntegerSetting(1, 36500)
  AUDIT_RETENTION_DAYS?: number;

  /**
   * Whether this process sends the subscriptions' webhook messages (every replica may: a
   * message is leased to one sender). The command-line tool never does.
   */
  @BooleanSetting()
  WEBHOOK_DELIVERY = true;

  /** Seconds between a failed attempt and the next, one per retry; then the dead-letter list. */
  @Matches(/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/, {
    message: 'WEBHOOK_RETRY_SECONDS must be a comma list of seconds',
  })
  WEBHOOK_RETRY_SECONDS = '5,300,1800,7200,18000,36000';

  /** How long a receiver may take to answer before the attempt counts as failed. */
  @IntegerSetting(100, 120_000)
  WEBHOOK_TIMEOUT_MS = 10_000;

  /** How often the outbox is looked at for new or due messages. */
  @IntegerSetting(10, 60_000)
  WEBHOOK_POLL_MS = 500;

  /** Subscriptions may name plain-HTTP URLs (tests, a receiver beside the catalog). */
  @BooleanSetting()
  WEBHOOK_ALLOW_HTTP = false;

  get webhookRetrySeconds(): number[] {
    return this.WEBHOOK_RETRY_SECONDS.split(',').map(Number);
  }

  /**
   * The institute that publishes the DCAT catalog (`dct:publisher`). Unset: GET /api/dcat
   * answers 404 (the export is not configured). See docs/dcat.md.
   */
  @IsOptional()
  @IsString()
  @MinLength(1)
  DCAT_PUBLISHER_NAME?: string;

  /** The publisher's IRI (e.g. its ROR id); unset: <CATALOG_SOURCE>/api/dcat/publisher. */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true })
  DCAT_PUBLISHER_URI?: string;

  /** The publisher's type (HealthDCAT-AP publisher-type or ADMS publisher type IRI). */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true })
  DCAT_PUBLISHER_TYPE?: string;

  /** Contact e-mail of the publisher and of datasets without a local custodian. */
  @IsOptional()
  @IsEmail()
  DCAT_CONTACT_EMAIL?: string;

  /** The health data access body named on NON_PUBLIC datasets (healthdcatap:hdab). */
  @IsOptional()
  @IsString()
  @MinLength(1)
  DCAT_HDAB_NAME?: string;

  /** The HDAB's IRI; unset: <CATALOG_SOURCE>/api/dcat/hdab. */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true })
  DCAT_HDAB_URI?: string;

  @ValidateIf((s: CatalogSettings) => s.DCAT_HDAB_NAME !== undefined)
  @IsEmail({}, { message: 'DCAT_HDAB_EMAIL must be an e-mail address when DCAT_HDAB_NAME is set' })
  DCAT_HDAB_EMAIL?: string;

  /**
   * dcatap:applicableLegislation of the catalog and its NON_PUBLIC datasets: ELI IRIs,
   * comma-separated (default: the EHDS regulation, (EU) 2025/327).
   */
  @Matches(/^https?:\/\/[^\s,]+(,https?:\/\/[^\s,]+)*$/, {
    message: 'DCAT_APPLICABLE_LEGISLATION must be a comma list of http(s) IRIs',
  })
  DCAT_APPLICABLE_LEGISLATION = 'http://data.europa.eu/eli/reg/2025/327/oj';

  /** Datasets a page of GET /api/dcat holds (Hydra paging); each page is streamed. */
  @IntegerSetting(1, 10000)
  DCAT_PAGE_SIZE = 1000;

  /**
   * Datasets whose text the DCAT answers being sent may hold together: a page is read and sent
   * at the database's pace, never waiting for its client, so what a slow client has not taken
   * stays in memory until it has; a page counts whole from before its first byte until its last,
   * so slow readers are bounded in what they hold, not only in number. One more answer past it gets 503 with
   * Retry-After (one is always served). A full page of 1,000 large datasets held is about 17 MB
   * of Turtle, outside the heap: the default keeps four far below the pod's 512 MiB.
   */
  @IntegerSetting(1, 10_000_000)
  DCAT_HELD_DATASETS_MAX = 4000;

  /**
   * Mark the FAIR Data Point's root, catalog and datasets `ejp:vpConnection ejp:VPDiscoverable`:
   * the EJP RD Virtual Platform's index lists only resources so marked (docs/fdp.md).
   */
  @BooleanSetting()
  FDP_VP_DISCOVERABLE = false;

  /**
   * FAIR Data Point indexes to ping with the FDP's root, comma-separated (e.g.
   * https://home.fairdatapoint.org): at start, then weekly. Unset: none.
   */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s,]+(,https?:\/\/[^\s,]+)*$/, {
    message: 'FDP_INDEX_URL must be a comma list of http(s) URLs',
  })
  FDP_INDEX_URL?: string;

  /** Where work that needs a session of its own connects: the database itself. */
  get sessionDatabaseUrl(): string {
    return this.DATABASE_DIRECT_URL ?? this.DATABASE_URL;
  }

  get source(): string {
    return this.CATALOG_SOURCE ?? `http://${hostname()}:${this.PORT}`;
  }

  /** FDP_INDEX_URL as a list. */
  get fdpIndexUrls(): string[] {
    return this.FDP_INDEX_URL === undefined ? [] : this.FDP_INDEX_URL.split(',');
  }

  /** DCAT_APPLICABLE_LEGISLATION as a list. */
  get applicableLegislation(): string[] {
    return this.DCAT_APPLICABLE_LEGISLATION.split(',');
  }

  /** The registration keys' SHA-256 digests (none when unset). */
  get registrationKeyHashes(): string[] {
    return this.REGISTRATION_API_KEY_SHA256?.split(',') ?? [];
  }

  /** The passport-broker keys' SHA-256 digests (none when unset). */
  get brokerKeyHashes(): string[] {
    return this.GA4GH_BROKER_API_KEY_SHA256?.split(',') ?? [];
  }

  /** The realm's base URL, when an identity provider is configured. */
  get idpRealmUrl(): string | undefined {
    if (this.IDP_URL === undefined || this.IDP_REALM === undefined) return undefined;
    return `${this.IDP_URL}/realms/${encodeURIComponent(this.IDP_REALM)}`;
  }
}

export const CATALOG_SETTINGS = Symbol('CATALOG_SETTINGS');

export function loadCatalogSettings(env: NodeJS.ProcessEnv = process.env): CatalogSettings {
  return loadSettings(CatalogSettings, env);
}
