import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, IsUrl, Max, Min, MinLength } from 'class-validator';
import { hostname } from 'node:os';
import { loadSettings, parseBoolean, parseInteger } from '@app/platform';

/** Every setting of catalog-api, validated once at boot (see .env.example for each one). */
export class CatalogSettings {
  @Transform(({ value }) => parseInteger(value))
  @IsInt()
  @Min(1)
  @Max(65535)
  PORT = 3000;

  @IsString()
  HOST = '0.0.0.0';

  @IsUrl({ protocols: ['postgres', 'postgresql'], require_tld: false, require_protocol: true })
  DATABASE_URL!: string;

  /** Size of the Postgres connection pool of one replica. */
  @Transform(({ value }) => parseInteger(value))
  @IsInt()
  @Min(1)
  @Max(200)
  DATABASE_POOL_SIZE = 10;

  /** Run pending migrations at start (under an advisory lock). Off in Kubernetes: a Job runs them. */
  @Transform(({ value }) => parseBoolean(value))
  @IsBoolean()
  MIGRATIONS_RUN = true;

  /** Unset = the global key is disabled. */
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'GLOBAL_API_KEY must be at least 32 characters long' })
  GLOBAL_API_KEY?: string;

  /** Public base URL of this service, put in `source` on every exported record. */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true })
  CATALOG_SOURCE?: string;

  @Transform(({ value }) => parseInteger(value))
  @IsInt()
  @Min(1024)
  MAX_BODY_BYTES = 10 * 1024 * 1024;

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL = 'info';

  /** Proxies whose X-Forwarded-For hops are believed (addresses or CIDR ranges). */
  @IsString()
  TRUSTED_PROXIES = '';

  get source(): string {
    return (this.CATALOG_SOURCE ?? `http://${hostname()}:${this.PORT}`).replace(/\/+$/, '');
  }
}

export const CATALOG_SETTINGS = Symbol('CATALOG_SETTINGS');

export function loadCatalogSettings(env: NodeJS.ProcessEnv = process.env): CatalogSettings {
  return loadSettings(CatalogSettings, env);
}
