import {
  IsIn,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  MaxLength,
  MinLength,
  ValidateBy,
  ValidateIf,
  type ValidationArguments,
} from 'class-validator';
import { Transform } from 'class-transformer';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import {
  BaseUrlSetting,
  BooleanSetting,
  FrontDoorSettings,
  IntegerSetting,
  loadSettings,
  LOG_LEVELS,
  parseBoolean,
  RealSecret,
  urlPassword,
} from '@app/platform';
import { IsSourcesSetting, sourcesFromSetting } from './sources-setting';
import { IsHostPortList, OneRedisTopology, OnlyWith } from './redis-settings';
import { DEFAULT_SOURCE_LIMITS, type SourceConfig, type SourceLimits } from './source-config';
import type { DrsEndpoint, DrsSettings } from './drs-settings';

/**
 * Copy threads per worker process unless IMPORT_COPY_THREADS says otherwise: one per core, as
 * each file's copy is blocking work (most of it kernel time in open and create). Capped at 4:
 * more than the cores only contend (3 measured no better than 2 on 2 cores), and a worker pod
 * is limited to 2 CPUs in the manifests anyway.
 */
export const DEFAULT_COPY_THREADS = Math.min(availableParallelism(), 4);
/**
 * On S3 the threads only read and hash small files (a few tens of µs each) while the main
 * thread uploads them (hundreds of µs each): one thread keeps up, and a second costs an isolate
 * (~15 MiB) at the peak of a million-object import (docs/decisions/s3-million-memory-levers.md).
 */
export const S3_DEFAULT_COPY_THREADS = 1;
/** The API keys of the dss sources and the S3 secret keys of the s3 sources in SOURCES. */
function sourceSecrets(value: string): string {
  return sourcesFromSetting(value)
    .sources.map((source) =>
      source.type === 'dss'
        ? source.api_key
        : source.type === 's3'
          ? (source.secret_access_key ?? '')
          : '',
    )
    .join(' ');
}

/** Either half of the S3 key pair is set: then both must be. */
function s3KeyPairGiven(s: ProvisionerSettings): boolean {
  return s.S3_ACCESS_KEY_ID !== undefined || s.S3_SECRET_ACCESS_KEY !== undefined;
}

/**
 * Every setting of the provisioner API and worker, validated once at boot (see .env.example);
 * the front-door settings (TRUSTED_PROXIES, AUTH_FAILURE_*) come from FrontDoorSettings.
 */
export class ProvisionerSettings extends FrontDoorSettings {
  @IntegerSetting(1, 65535)
  PORT = 3001;

  /** The worker process serves only /health/* (and metrics) on this port. */
  @IntegerSetting(1, 65535)
  WORKER_HEALTH_PORT = 3002;

  @IsString()
  HOST = '0.0.0.0';

  /**
   * BullMQ on one Redis when set; with REDIS_SENTINELS or REDIS_CLUSTER_NODES instead, on a
   * Sentinel set or a Cluster; with none of them, BullMQ's PostgreSQL backend on DATABASE_URL.
   */
  @IsOptional()
  @IsUrl({ protocols: ['redis', 'rediss'], require_tld: false, require_protocol: true })
  @RealSecret(urlPassword)
  REDIS_URL?: string;

  /** The Sentinels of the queue's Redis (host:port, comma list): ioredis asks them for the primary. */
  @IsOptional()
  @IsHostPortList()
  @OneRedisTopology()
  REDIS_SENTINELS?: string;

  /** The primary's name in the Sentinels' configuration (`sentinel monitor NAME …`). */
  @ValidateIf(
    (s: ProvisionerSettings) =>
      s.REDIS_SENTINELS !== undefined || s.REDIS_SENTINEL_NAME !== undefined,
  )
  @Matches(/^[A-Za-z0-9._-]{1,64}$/, {
    message:
      "REDIS_SENTINEL_NAME must be the primary's name (A-Z a-z 0-9 . _ -); required with REDIS_SENTINELS",
  })
  @OnlyWith('REDIS_SENTINELS')
  REDIS_SENTINEL_NAME?: string;

  /** The Sentinels' own password (`requirepass` of sentinel.conf); unset = none. */
  @IsOptional()
  @IsString()
  @RealSecret()
  @OnlyWith('REDIS_SENTINELS')
  REDIS_SENTINEL_PASSWORD?: string;

  /** The Redis servers' password with REDIS_SENTINELS or REDIS_CLUSTER_NODES (REDIS_URL carries its own). */
  @IsOptional()
  @IsString()
  @RealSecret()
  @OnlyWith('REDIS_SENTINELS', 'REDIS_CLUSTER_NODES')
  REDIS_PASSWORD?: string;

  /**
   * Some nodes of a Redis Cluster (host:port, comma list; ioredis finds the rest). The queue's
   * keys then begin with `{QUEUE_PREFIX}`, a hash tag, so each queue's keys share one slot.
   */
  @IsOptional()
  @IsHostPortList()
  @OneRedisTopology()
  REDIS_CLUSTER_NODES?: string;

  @ValidateIf((s: ProvisionerSettings) => !s.redisConfigured || s.DATABASE_URL !== undefined)
  @IsUrl(
    { protocols: ['postgres', 'postgresql'], require_tld: false, require_protocol: true },
    {
      message:
        'DATABASE_URL must be a postgres:// URL (it is required when neither REDIS_URL, REDIS_SENTINELS nor REDIS_CLUSTER_NODES is set)',
    },
  )
  @RealSecret(urlPassword)
  DATABASE_URL?: string;

  /**
   * The database itself, when DATABASE_URL names a pooler in transaction mode (PgBouncer): the
   * PostgreSQL queue backend needs a session of its own (LISTEN), so it connects here.
   */
  @IsOptional()
  @IsUrl({ protocols: ['postgres', 'postgresql'], require_tld: false, require_protocol: true })
  @RealSecret(urlPassword)
  DATABASE_DIRECT_URL?: string;

  /** Namespace of the queue's keys (Redis) or schema (Postgres); tests use one per run. */
  @Matches(/^[a-z][a-z0-9_]{0,40}$/, { message: 'QUEUE_PREFIX must match ^[a-z][a-z0-9_]{0,40}$' })
  QUEUE_PREFIX = 'provisioner';

  /** The key that may read and write (import). Unset = no writes possible. */
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'PROVISIONER_API_KEY must be at least 32 characters long' })
  @RealSecret()
  PROVISIONER_API_KEY?: string;

  /** Comma-separated read-only keys (each at least 32 characters). */
  @Matches(/^(\s*[^,\s]{32,}\s*(,\s*[^,\s]{32,}\s*)*)?$/, {
    message: 'PROVISIONER_READ_API_KEYS must be a comma list of keys of at least 32 characters',
  })
  @RealSecret()
  PROVISIONER_READ_API_KEYS = '';

  /** Where imports are stored: a filesystem under STORAGE_ROOT, or an S3 bucket (S3_*). */
  @IsIn(['filesystem', 's3'], { message: 'STORAGE_BACKEND must be filesystem or s3' })
  STORAGE_BACKEND: 'filesystem' | 's3' = 'filesystem';

  /** Where imported data lives with STORAGE_BACKEND=filesystem (a shared volume in Kubernetes). */
  @IsString()
  STORAGE_ROOT = resolve('data/storage');

  /**
   * Archive mode: `crypt4gh` stores every imported file as Crypt4GH for the archive's key
   * (C4GH_ARCHIVE_SECRET_KEY_FILE), its header apart from its body; `off` stores plain-text
   * (docs/decisions/archive-encryption.md).
   */
  @IsIn(['off', 'crypt4gh'], { message: 'STORAGE_ENCRYPTION must be off or crypt4gh' })
  STORAGE_ENCRYPTION: 'off' | 'crypt4gh' = 'off';

  /**
   * The archive's Crypt4GH secret key file (c4gh-v1, as `crypt4gh-keygen` writes it), read at
   * start. Required with STORAGE_ENCRYPTION=crypt4gh.
   */
  @ValidateIf(
    (s: ProvisionerSettings) =>
      s.STORAGE_ENCRYPTION === 'crypt4gh' || s.C4GH_ARCHIVE_SECRET_KEY_FILE !== undefined,
  )
  @Matches(/\S/, {
    message:
      'C4GH_ARCHIVE_SECRET_KEY_FILE is required with STORAGE_ENCRYPTION=crypt4gh (a file path)',
  })
  C4GH_ARCHIVE_SECRET_KEY_FILE?: string;

  /** A file whose first line is the passphrase of an encrypted C4GH_ARCHIVE_SECRET_KEY_FILE. */
  @IsOptional()
  @IsString()
  @MinLength(1, { message: 'C4GH_ARCHIVE_PASSPHRASE_FILE must be a file path' })
  @OnlyWith('C4GH_ARCHIVE_SECRET_KEY_FILE')
  C4GH_ARCHIVE_PASSPHRASE_FILE?: string;

  /**
   * During an archive key rotation: the key file of the key stored headers were encrypted for
   * before C4GH_ARCHIVE_SECRET_KEY_FILE. It still opens them (DRS, deposits); nothing is encrypted
   * for it; `npm run provisioner -- rotate-archive-key` re-wraps every header from it to the
   * archive key. Remove it once that command reports nothing left.
   */
  @IsOptional()
  @IsString()
  @MinLength(1, { message: 'C4GH_ARCHIVE_PREVIOUS_SECRET_KEY_FILE must be a file path' })
  @OnlyWith('C4GH_ARCHIVE_SECRET_KEY_FILE')
  C4GH_ARCHIVE_PREVIOUS_SECRET_KEY_FILE?: string;

  /** A file whose first line is the passphrase of an encrypted C4GH_ARCHIVE_PREVIOUS_SECRET_KEY_FILE. */
  @IsOptional()
  @IsString()
  @MinLength(1, { message: 'C4GH_ARCHIVE_PREVIOUS_PASSPHRASE_FILE must be a file path' })
  @OnlyWith('C4GH_ARCHIVE_PREVIOUS_SECRET_KEY_FILE')
  C4GH_ARCHIVE_PREVIOUS_PASSPHRASE_FILE?: string;

  /** The S3 endpoint (https://… of Ceph RGW, MinIO, iRODS's S3 API, …); unset = AWS. */
  @IsOptional()
  @IsUrl(
    { require_tld: false, require_protocol: true, protocols: ['http', 'https'] },
    { message: 'S3_ENDPOINT must be an http(s):// URL' },
  )
  S3_ENDPOINT?: string;

  @Matches(/^[a-z0-9-]{1,40}$/, { message: 'S3_REGION must be a region name such as us-east-1' })
  S3_REGION = 'us-east-1';

  /** The bucket, which must exist (the provisioner never creates one). Required for s3. */
  @ValidateIf((s: ProvisionerSettings) => s.STORAGE_BACKEND === 's3')
  @Matches(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, {
    message:
      'S3_BUCKET must be a bucket name (3-63 of a-z, 0-9, "." and "-"); required when STORAGE_BACKEND=s3',
  })
  S3_BUCKET?: string;

  /**
   * Keys start with this (the layout `projects/…` follows it); '' = the bucket's root. At most
   * 512 characters, so that the layout's own objects always fit S3's 1,024 bytes of key.
   */
  @MaxLength(512, { message: 'S3_PREFIX must be at most 512 characters' })
  @Matches(/^(?!(?:.*\/)?\.\.?(?:\/|$))(?:[A-Za-z0-9!_.*'()-]+\/)*(?:[A-Za-z0-9!_.*'()-]+\/?)?$/, {
    message:
      'S3_PREFIX must be "/"-separated segments of A-Z a-z 0-9 ! _ . * \' ( ) - (none "." or ".."), without a leading "/"',
  })
  S3_PREFIX = '';

  /** Path-style URLs (https://host/bucket/key): what MinIO, Swift and most non-AWS servers need. */
  @BooleanSetting()
  S3_FORCE_PATH_STYLE = false;

  /** Both or neither (then the SDK's chain: AWS_* variables, web identity, instance profile). */
  @ValidateIf(s3KeyPairGiven)
  @IsString({ message: 'S3_ACCESS_KEY_ID is required with S3_SECRET_ACCESS_KEY' })
  S3_ACCESS_KEY_ID?: string;

  @ValidateIf(s3KeyPairGiven)
  @IsString({ message: 'S3_SECRET_ACCESS_KEY is required with S3_ACCESS_KEY_ID' })
  @MinLength(1, { message: 'S3_SECRET_ACCESS_KEY must not be empty' })
  @RealSecret()
  S3_SECRET_ACCESS_KEY?: string;

  /** Size of each multipart part, 5 MiB (S3's minimum) to 512 MiB; files up to it are one PUT. */
  @IntegerSetting(5 * 1024 * 1024, 512 * 1024 * 1024)
  S3_PART_BYTES = 8 * 1024 * 1024;

  /**
   * Part buffers of the whole worker (filling or uploading), one pool shared by all its imports:
   * upload memory is S3_UPLOAD_CONCURRENCY × S3_PART_BYTES (32 MiB by default), whatever
   * IMPORT_CONCURRENCY is. Four 8 MiB parts in flight keep one Swift proxy as busy as eight did.
   */
  @IntegerSetting(1, 256)
  S3_UPLOAD_CONCURRENCY = 4;

  /**
   * An S3 inbox object of at least two ranges is read as ranged GETs of this size, up to
   * S3_INBOX_RANGES of them in flight (each with If-Match), hashed in order.
   */
  @IntegerSetting(1024 * 1024, 256 * 1024 * 1024)
  S3_INBOX_RANGE_BYTES = 8 * 1024 * 1024;

  /**
   * Ranged GETs of one inbox object in flight (1: one GET per object). The ranges read ahead of
   * the bytes being hashed hold at most 2 × (S3_INBOX_RANGES − 1) × S3_INBOX_RANGE_BYTES in a
   * worker (48 MiB by default), whatever the number of imports and lanes.
   */
  @IntegerSetting(1, 16)
  S3_INBOX_RANGES = 4;

  /** Time limit of opening a connection to the S3 endpoint (TCP and TLS). */
  @IntegerSetting(100, 600_000)
  S3_CONNECT_TIMEOUT_MS = 10_000;

  /**
   * Time limit of one S3 request, from sending it to the answer's headers: a part of
   * S3_PART_BYTES must go up within it at the slowest rate accepted (8 MiB in 5 min: 28 KB/s).
   */
  @IntegerSetting(100, 86_400_000)
  S3_REQUEST_TIMEOUT_MS = 300_000;

  /** How long a connection to the S3 endpoint may carry no byte either way mid-request. */
  @IntegerSetting(100, 3_600_000)
  S3_IDLE_TIMEOUT_MS = 60_000;

  /**
   * JSON list of sources ({name, type: "dropzone", root} or {name, type: "dss", url, api_key,
   * landing_zone, ...}); unset = one dropzone source named `dropzone` over data/dropzone.
   */
  @IsOptional()
  @IsSourcesSetting()
  @RealSecret(sourceSecrets)
  SOURCES?: string;

  /**
   * Largest submission.json or dataset.json read from a source (depositors write them): a larger
   * one is refused (the submission is left out, the dataset is not ready: `metadata_refused`).
   */
  @IntegerSetting(1024)
  SOURCE_METADATA_MAX_BYTES = DEFAULT_SOURCE_LIMITS.metadataMaxBytes;

  /**
   * Largest checksum manifest read from a source: about 1,000,000 files with 60-character paths
   * by default (IMPORT_MAX_FILES). A larger one is refused (`metadata_refused`). Manifests are streamed; a
   * listing holds the paths of one manifest at a time.
   */
  @IntegerSetting(1024)
  SOURCE_MANIFEST_MAX_BYTES = DEFAULT_SOURCE_LIMITS.manifestMaxBytes;

  /**
   * Most datasets one drop-zone submission.json may name: a submission naming more is refused
   * (left out of listings; its imports answer 409 `metadata_refused` saying why), so that no
   * depositor's file decides how long a listing takes or how much it weighs.
   */
  @IntegerSetting(1)
  SOURCE_SUBMISSION_MAX_DATASETS = DEFAULT_SOURCE_LIMITS.submissionMaxDatasets;

  /** Cron pattern of the scheduled sync (imports everything eligible and ready); unset = off. */
  @IsOptional()
  @Matches(/^\s*\S+(\s+\S+){4,5}\s*$/, {
    message: 'IMPORT_SCHEDULE must be a cron pattern of 5 or 6 fields',
  })
  IMPORT_SCHEDULE?: string;

  /**
   * How long a worker's claim on a running import lasts without renewal: after a worker dies,
   * its import is picked up again this long after the last renewal.
   */
  @IntegerSetting(1000)
  IMPORT_LOCK_MS = 30_000;

  @IntegerSetting(1, 100)
  IMPORT_MAX_ATTEMPTS = 5;

  @IntegerSetting(1, 64)
  IMPORT_CONCURRENCY = 2;

  /**
   * Files the running imports of one worker hold in memory at once (each about 100 bytes and its
   * name from preflight to publish, PlannedFiles): an import waits until its dataset's files fit
   * beside the others', and a dataset of more files than this is refused (409
   * `too_many_files`, or rejected). A million files take a worker to under 300 MiB on either
   * backend (docs/decisions/s3-million-memory-levers.md).
   */
  @IntegerSetting(1000)
  IMPORT_MAX_FILES = 1_000_000;

  /**
   * Worker threads that copy and hash the files of imports to local storage (on S3, read and
   * hash the small files the main thread uploads), shared by the process's imports (started
   * with the worker); 0 copies them on the main thread. Default: min(CPU cores, 4); on S3, 1
   * (see `copyThreads`).
   */
  @IsOptional()
  @IntegerSetting(0, 64)
  IMPORT_COPY_THREADS?: number;

  /**
   * Archive mode's sealing threads, which encrypt the large bodies the main thread writes (S3
   * storage, or no copy threads); 0 seals them on the main thread. Apart from the copy threads
   * because on S3 one copy thread keeps up while sealing is the heavy work. Default:
   * IMPORT_COPY_THREADS when set, else min(CPU cores, 4) (see `sealingThreads`).
   */
  @IsOptional()
  @IntegerSetting(0, 64)
  IMPORT_SEALING_THREADS?: number;

  /**
   * The worker's private local directory for validations (SOURCES[].validators): their input,
   * output and scratch directories, and, with S3 storage or in archive mode, a copy of each
   * dataset's verified bytes for its validators, removed when they finish. In archive mode it
   * holds plain text while a validator runs: give it a memory-backed or encrypted volume of the
   * worker's own. Default: the system's temporary directory.
   */
  @IsOptional()
  @Matches(/^\//, { message: 'VALIDATOR_WORK_DIR must be an absolute path' })
  VALIDATOR_WORK_DIR?: string;

  /**
   * Bytes the copies in VALIDATOR_WORK_DIR may hold at once (the worker's validations together):
   * a dataset larger than this is refused (`validation_too_large`) before anything is copied; one
   * that fits beside the others waits for them. Default 10 GiB.
   */
  @IntegerSetting(1)
  VALIDATOR_WORK_MAX_BYTES = 10 * 1024 * 1024 * 1024;

  /**
   * How the copy threads write files of 1 MiB or more to filesystem storage: `auto` measures the
   * disk when the worker first stages an import (and daily) and writes them past the page cache
   * (O_DIRECT) unless writing through it and flushing is faster there; `true` always past it
   * where the filesystem supports it; `false` every file through the cache.
   */
  @Transform(({ value }) => (value === 'auto' ? value : parseBoolean(value)))
  @IsIn(['auto', true, false], {
    message: 'IMPORT_DIRECT_WRITES must be auto, true or false',
  })
  IMPORT_DIRECT_WRITES: 'auto' | boolean = 'auto';

  /**
   * The catalog that published imports are registered in (POST /api/registrations). Unset, or
   * without CATALOG_API_KEY, registration is off: each import record says `catalog.state: off`.
   */
  @ValidateIf(
    (s: ProvisionerSettings) => s.CATALOG_URL !== undefined || s.DRS_PUBLIC_URL !== undefined,
  )
  @IsUrl(
    { require_tld: false, require_protocol: true, protocols: ['http', 'https'] },
    { message: 'CATALOG_URL must be an http(s) URL (required with DRS_PUBLIC_URL)' },
  )
  @BaseUrlSetting()
  CATALOG_URL?: string;

  /** The catalog's registration key (its SHA-256 is the catalog's REGISTRATION_API_KEY_SHA256). */
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'CATALOG_API_KEY must be at least 32 characters long' })
  @RealSecret()
  CATALOG_API_KEY?: string;

  /** The platform name of STORAGE_ROOT in the catalog's dataset records (`storages[].platform`). */
  @IsString()
  @MinLength(1)
  CATALOG_STORAGE_PLATFORM = 'provisioner-storage';

  /**
   * Attempts of one registration while the catalog is unreachable or answers 5xx, with
   * exponential backoff from CATALOG_RETRY_DELAY_MS: the defaults retry for about 9 hours
   * (1 s × (2^15 − 1)) before the record shows the registration as given up.
   */
  @IntegerSetting(1, 30)
  CATALOG_MAX_ATTEMPTS = 16;

  @IntegerSetting(10, 3_600_000)
  CATALOG_RETRY_DELAY_MS = 1000;

  /** Time limit of one call to the catalog. */
  @IntegerSetting(100, 600_000)
  CATALOG_TIMEOUT_MS = 10_000;

  /**
   * How long the trail worker lets a new event wait before delivering it, so the events of that
   * moment go to the catalog in one request (a backlog goes at once): fewer, larger deliveries
   * take less CPU away from the decisions being answered. 0 = each event at once.
   */
  @IntegerSetting(0, 10_000)
  TRAIL_BATCH_WAIT_MS = 200;

  /**
   * The public base URL of this API (scheme, host, optional port and path). Set, the stored
   * datasets are served as GA4GH DRS 1.5 objects under /ga4gh/drs/v1, named
   * `drs://<its host>/<id>`, and registrations carry each dataset's DRS URI. Unset, DRS is off.
   */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  @BaseUrlSetting()
  DRS_PUBLIC_URL?: string;

  /**
   * The visa issuer DRS trusts (a visa's `iss`: the catalog's CATALOG_SOURCE). Required with
   * DRS_PUBLIC_URL.
   */
  @ValidateIf((s: ProvisionerSettings) => s.DRS_PUBLIC_URL !== undefined)
  @IsUrl(
    { require_tld: false, require_protocol: true, protocols: ['http', 'https'] },
    {
      message:
        "DRS_VISA_ISSUER must be the catalog's visa issuer URL (required with DRS_PUBLIC_URL)",
    },
  )
  @BaseUrlSetting()
  DRS_VISA_ISSUER?: string;

  /**
   * The only `jku` a visa may name, whose JWKS verifies its signature. Default: the issuer's
   * `/api/jwk`.
   */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  DRS_VISA_JKU?: string;

  /**
   * The catalog's visa-broker key (its SHA-256 is the catalog's GA4GH_BROKER_API_KEY_SHA256):
   * DRS reads a person's current visas from the catalog (CATALOG_URL) with it, so a revoked
   * grant stops access (the grant check). Required with DRS_PUBLIC_URL.
   */
  @ValidateIf(
    (s: ProvisionerSettings) =>
      s.DRS_PUBLIC_URL !== undefined || s.DRS_CATALOG_BROKER_KEY !== undefined,
  )
  @IsString({ message: 'DRS_CATALOG_BROKER_KEY is required with DRS_PUBLIC_URL' })
  @MinLength(32, { message: 'DRS_CATALOG_BROKER_KEY must be at least 32 characters long' })
  @RealSecret()
  DRS_CATALOG_BROKER_KEY?: string;

  /** How long the catalog's answer about a person's grants is used: the revocation bound. */
  @IntegerSetting(0, 3600)
  DRS_GRANT_CHECK_SECONDS = 60;

  /** How long an access URL works after it was issued. */
  @IntegerSetting(10, 86_400)
  DRS_ACCESS_URL_SECONDS = 300;

  /**
   * The key that signs access URLs (at least 32 characters; the same on every API replica).
   * Required with DRS_PUBLIC_URL in production (NODE_ENV=production, as the image sets it):
   * unset, each process makes one at start, so a URL works only on the replica that issued it
   * and until it restarts (docs/decisions/drs-access-url-keys.md).
   */
  @ValidateIf(
    (s: ProvisionerSettings) =>
      (s.DRS_PUBLIC_URL !== undefined && s.production) || s.DRS_URL_SIGNING_KEY !== undefined,
  )
  @ValidateBy({
    name: 'drsUrlSigningKey',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && value.length >= 32,
      defaultMessage: (args?: ValidationArguments) =>
        args?.value === undefined
          ? 'DRS_URL_SIGNING_KEY is required with DRS_PUBLIC_URL in production (NODE_ENV=production): every replica must sign access URLs with the same key'
          : 'DRS_URL_SIGNING_KEY must be at least 32 characters long',
    },
  })
  @RealSecret()
  DRS_URL_SIGNING_KEY?: string;

  /**
   * The key that will sign access URLs next: accepted (never used to sign) so that replicas
   * already signing with it and those not yet overlap during a rotation.
   */
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'DRS_URL_NEXT_SIGNING_KEY must be at least 32 characters long' })
  @RealSecret()
  @OnlyWith('DRS_URL_SIGNING_KEY')
  DRS_URL_NEXT_SIGNING_KEY?: string;

  /**
   * The key that signed access URLs before DRS_URL_SIGNING_KEY: still accepted, so URLs issued
   * before a rotation work until they expire (remove it DRS_ACCESS_URL_SECONDS after).
   */
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'DRS_URL_PREVIOUS_SIGNING_KEY must be at least 32 characters long' })
  @RealSecret()
  @OnlyWith('DRS_URL_SIGNING_KEY')
  DRS_URL_PREVIOUS_SIGNING_KEY?: string;

  /**
   * NODE_ENV=production: settings a deployment needs (DRS_URL_SIGNING_KEY) are required. Set by
   * the image, not by a deployment's ConfigMap: read as given, no setting of its own.
   */
  NODE_ENV?: string;

  /** Object ids one bulk request may name (service-info's maxBulkRequestLength); past it, 413. */
  @IntegerSetting(1, 100_000)
  DRS_MAX_BULK_REQUEST_LENGTH = 1000;

  /**
   * Files a dataset may have to be served over DRS: the API holds a served dataset's files (its
   * DRS ids, the compound object's manifest) in memory, about 2 KiB a file while it is read
   * (50,000 files: ~110 MiB). A larger dataset answers 501 `dataset_too_large` and is left out of
   * service-info's counts; datasets are read one at a time, and those kept hold at most this
   * many files in all.
   */
  @IntegerSetting(1, 10_000_000)
  DRS_MAX_DATASET_FILES = 50_000;

  /** Visas one request's passports may carry in all; past it, 400 (MAX_BODY_BYTES bounds bytes). */
  @IntegerSetting(1, 100_000)
  DRS_MAX_VISAS = 200;

  /**
   * Who sends a stored file's bytes on the filesystem backend: `off`, this process; `nginx`, an
   * nginx in front of it (X-Accel-Redirect) after this process has checked the access URL.
   */
  @IsIn(['off', 'nginx'], { message: 'DRS_BYTES_OFFLOAD must be off or nginx' })
  DRS_BYTES_OFFLOAD: 'off' | 'nginx' = 'off';

  /**
   * `on`: a file stored encrypted (archive mode) is sent decrypted to a reader who sends no
   * Crypt4GH public key, as a plain file is; `off` (the default) answers such a read 400
   * `c4gh_key_required`. Accepted only with an https:// DRS_PUBLIC_URL: plain-text never leaves
   * but over TLS (docs/decisions/plaintext-downloads.md).
   */
  @ValidateBy({
    name: 'drsPlaintextDownloads',
    validator: {
      validate: (value: unknown, args?: ValidationArguments) =>
        value === 'off' ||
        (value === 'on' &&
          ((args?.object as ProvisionerSettings).DRS_PUBLIC_URL ?? '').startsWith('https://')),
      defaultMessage: (args?: ValidationArguments) =>
        args?.value === 'on'
          ? 'DRS_PLAINTEXT_DOWNLOADS=on needs an https:// DRS_PUBLIC_URL: plain-text is sent only over TLS'
          : 'DRS_PLAINTEXT_DOWNLOADS must be off or on',
    },
  })
  DRS_PLAINTEXT_DOWNLOADS: 'off' | 'on' = 'off';

  /** nginx's internal location aliased to the storage root (used with DRS_BYTES_OFFLOAD=nginx). */
  @Matches(/^\/[A-Za-z0-9_.~-]+\/$/, {
    message:
      'DRS_BYTES_OFFLOAD_PREFIX must be one path segment between slashes, like /_drs_internal/',
  })
  DRS_BYTES_OFFLOAD_PREFIX = '/_drs_internal/';

  /** The issuer of the login tokens (Keycloak realm URL) that OPTIONS names for BearerAuth. */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  DRS_BEARER_ISSUER?: string;

  @IntegerSetting(1024)
  MAX_BODY_BYTES = 1024 * 1024;

  @IsIn(LOG_LEVELS)
  LOG_LEVEL = 'info';

  /** A deployment (NODE_ENV=production, which the image sets), not a developer's machine. */
  /**
   * The worker's copy threads: IMPORT_COPY_THREADS, else DEFAULT_COPY_THREADS, or on S3
   * S3_DEFAULT_COPY_THREADS.
   */
  get copyThreads(): number {
    if (this.IMPORT_COPY_THREADS !== undefined) return this.IMPORT_COPY_THREADS;
    return this.STORAGE_BACKEND === 's3' ? S3_DEFAULT_COPY_THREADS : DEFAULT_COPY_THREADS;
  }

  /**
   * Archive mode's sealing threads (large bodies the main thread writes: S3, or no copy threads):
   * IMPORT_SEALING_THREADS; else IMPORT_COPY_THREADS when set (none with 0); else one per core up
   * to 4 even on S3, whose single copy thread only hashes small files while sealing is the heavy
   * work there.
   */
  get sealingThreads(): number {
    return this.IMPORT_SEALING_THREADS ?? this.IMPORT_COPY_THREADS ?? DEFAULT_COPY_THREADS;
  }

  get production(): boolean {
    return this.NODE_ENV === 'production';
  }

  /** The queue runs on Redis: one server, a Sentinel set or a Cluster. */
  get redisConfigured(): boolean {
    return (
      this.REDIS_URL !== undefined ||
      this.REDIS_SENTINELS !== undefined ||
      this.REDIS_CLUSTER_NODES !== undefined
    );
  }

  get sources(): SourceConfig[] {
    return sourcesFromSetting(this.SOURCES).sources;
  }

  get sourceLimits(): SourceLimits {
    return {
      metadataMaxBytes: this.SOURCE_METADATA_MAX_BYTES,
      manifestMaxBytes: this.SOURCE_MANIFEST_MAX_BYTES,
      submissionMaxDatasets: this.SOURCE_SUBMISSION_MAX_DATASETS,
    };
  }

  /** Registration is on when the catalog and the key to it are both configured. */
  get catalogRegistration(): { url: string; apiKey: string } | null {
    if (this.CATALOG_URL === undefined || this.CATALOG_API_KEY === undefined) return null;
    return { url: this.CATALOG_URL, apiKey: this.CATALOG_API_KEY };
  }

  /** DRS when DRS_PUBLIC_URL is set: the base URL without a trailing slash, and the trust. */
  get drs(): DrsEndpoint | null {
    if (this.DRS_PUBLIC_URL === undefined) return null;
    const publicUrl = this.DRS_PUBLIC_URL;
    const issuer = this.DRS_VISA_ISSUER!;
    return {
      publicUrl,
      host: new URL(publicUrl).host,
      issuer,
      jku: this.DRS_VISA_JKU ?? `${issuer}/api/jwk`,
      catalogUrl: this.CATALOG_URL!,
      brokerKey: this.DRS_CATALOG_BROKER_KEY!,
      bearerIssuer: this.DRS_BEARER_ISSUER,
    };
  }

  /** The DRS settings group (config/drs-settings.ts), derived once by the DRS module. */
  get drsSettings(): DrsSettings {
    return {
      endpoint: this.drs,
      accessUrlKeys: {
        signing: this.DRS_URL_SIGNING_KEY,
        next: this.DRS_URL_NEXT_SIGNING_KEY,
        previous: this.DRS_URL_PREVIOUS_SIGNING_KEY,
      },
      accessUrlSeconds: this.DRS_ACCESS_URL_SECONDS,
      grantCheckSeconds: this.DRS_GRANT_CHECK_SECONDS,
      maxVisas: this.DRS_MAX_VISAS,
      maxBulkRequestLength: this.DRS_MAX_BULK_REQUEST_LENGTH,
      maxDatasetFiles: this.DRS_MAX_DATASET_FILES,
      bytesOffloadPrefix: this.DRS_BYTES_OFFLOAD === 'nginx' ? this.DRS_BYTES_OFFLOAD_PREFIX : null,
      plaintextDownloads: this.DRS_PLAINTEXT_DOWNLOADS === 'on',
      catalogTimeoutMs: this.CATALOG_TIMEOUT_MS,
    };
  }

  /** The archive key's files in archive mode; null with STORAGE_ENCRYPTION=off. */
  get archiveKeyFiles(): {
    keyFile: string;
    passphraseFile?: string;
    previous?: { keyFile: string; passphraseFile?: string };
  } | null {
    if (this.STORAGE_ENCRYPTION !== 'crypt4gh') return null;
    return {
      keyFile: this.C4GH_ARCHIVE_SECRET_KEY_FILE!,
      passphraseFile: this.C4GH_ARCHIVE_PASSPHRASE_FILE,
      ...(this.C4GH_ARCHIVE_PREVIOUS_SECRET_KEY_FILE === undefined
        ? {}
        : {
            previous: {
              keyFile: this.C4GH_ARCHIVE_PREVIOUS_SECRET_KEY_FILE,
              passphraseFile: this.C4GH_ARCHIVE_PREVIOUS_PASSPHRASE_FILE,
            },
          }),
    };
  }

  /** S3_PREFIX as keys begin with it: '' or ending in '/'. */
  get s3KeyPrefix(): string {
    return this.S3_PREFIX === '' || this.S3_PREFIX.endsWith('/')
      ? this.S3_PREFIX
      : `${this.S3_PREFIX}/`;
  }

  get readApiKeys(): string[] {
    return this.PROVISIONER_READ_API_KEYS.split(',')
      .map((key) => key.trim())
      .filter((key) => key.length > 0);
  }
}

export const PROVISIONER_SETTINGS = Symbol('PROVISIONER_SETTINGS');

export function loadProvisionerSettings(env: NodeJS.ProcessEnv = process.env): ProvisionerSettings {
  return loadSettings(ProvisionerSettings, env);
}
