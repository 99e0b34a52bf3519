import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ApiKeyResolver, constantTimeEqual, hashApiKey, Principal } from '@app/auth';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';

/** Endpoint keys are exactly this long; any other length cannot be one. */
export const ENDPOINT_KEY_LENGTH = 64;

interface KeyOwnerRow {
  kind: 'user' | 'endpoint';
  id: number;
  name: string;
}

/**
 * Resolves catalog keys: the global key from settings (constant-time comparison), else one
 * indexed lookup by SHA-256 hash among active users' keys and, for 64-character keys, endpoint
 * keys. A wrong key therefore costs one hash and one index probe.
 */
@Injectable()
export class CatalogKeyResolver implements ApiKeyResolver {
  constructor(
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
    private readonly dataSource: DataSource,
  ) {}

  async resolve(apiKey: string): Promise<Principal | null> {
    const globalKey = this.settings.GLOBAL_API_KEY;
    if (globalKey !== undefined && constantTimeEqual(apiKey, globalKey)) {
      return { kind: 'global', name: 'global', canWrite: true };
    }
    const hash = hashApiKey(apiKey);
    const endpointPart =
      apiKey.length === ENDPOINT_KEY_LENGTH
        ? `UNION ALL SELECT 'endpoint' AS kind, id, name FROM endpoints WHERE api_key_hash = $1`
        : '';
    const rows = await this.dataSource.query<KeyOwnerRow[]>(
      `SELECT 'user' AS kind, id, username AS name FROM users
       WHERE api_key_hash = $1 AND is_active ${endpointPart} LIMIT 1`,
      [hash],
    );
    const owner = rows[0];
    if (owner === undefined) return null;
    return { kind: owner.kind, id: owner.id, name: owner.name, canWrite: false };
  }
}
