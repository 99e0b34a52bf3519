import { Inject, Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { ApiKeyResolver, constantTimeEqual, hashApiKey, Principal } from '@app/auth';
import { CatalogVersionTracker } from '../catalog-version/catalog-version-tracker';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { ApiKeyOwnersRepository } from './api-key-owners.repository';

/** Endpoint keys are exactly this long; any other length cannot be one. */
export const ENDPOINT_KEY_LENGTH = 64;
/** The kind and scope of a registration key (the provisioner's): POST /api/registrations only. */
export const REGISTRAR_KIND = 'registrar';
export const REGISTRATION_SCOPE = 'registration';
/** The kind and scope of a passport-broker key: GET /api/ga4gh/permissions/... only. */
export const BROKER_KIND = 'broker';
export const VISAS_SCOPE = 'GA4GH visas';

/** Resolved keys remembered per data version; past this many, the memory starts over. */
const KEY_CACHE_ENTRIES = 10_000;

/**
 * Resolves catalog keys: the global key from settings (constant-time comparison), else one
 * indexed lookup by SHA-256 hash among active users' keys and, for 64-character keys, endpoint
 * keys. A wrong key therefore costs one hash and one index probe. A registration key is known
 * by its SHA-256 among REGISTRATION_API_KEY_SHA256 (every digest compared in constant time) and
 * gets a principal scoped to the registration route; a passport-broker key likewise, among
 * GA4GH_BROKER_API_KEY_SHA256, scoped to the visa route. Keys that resolved are remembered until the data version changes (users and endpoints are versioned data, so a
 * revoked or replaced key changes it), and only while the version tracker vouches for it.
 */
@Injectable()
export class CatalogKeyResolver implements ApiKeyResolver {
  constructor(
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
    private readonly keyOwners: ApiKeyOwnersRepository,
    private readonly tracker: CatalogVersionTracker,
  ) {}

  private cachedVersion: string | null = null;
  private readonly cached = new Map<string, Principal>();

  async resolve(apiKey: string): Promise<Principal | null> {
    const globalKey = this.settings.GLOBAL_API_KEY;
    if (globalKey !== undefined && constantTimeEqual(apiKey, globalKey)) {
      return { kind: 'global', name: 'global', canWrite: true };
    }
    const hash = hashApiKey(apiKey);
    if (matchesAny(hash, this.registrationDigests)) {
      return {
        kind: REGISTRAR_KIND,
        name: REGISTRAR_KIND,
        canWrite: true,
        scope: REGISTRATION_SCOPE,
      };
    }
    if (matchesAny(hash, this.brokerDigests)) {
      return {
        kind: BROKER_KIND,
        name: BROKER_KIND,
        canWrite: false,
        scope: VISAS_SCOPE,
        vouchesForLogins: true,
      };
    }
    const version = this.tracker.known();
    if (version !== null && version === this.cachedVersion) {
      const hit = this.cached.get(hash);
      if (hit !== undefined) return hit;
    }
    const owner = await this.keyOwners.ownerOf(hash, apiKey.length === ENDPOINT_KEY_LENGTH);
    if (owner === undefined) return null;
    const principal: Principal = {
      kind: owner.kind,
      id: owner.id,
      name: owner.name,
      canWrite: false,
    };
    // Read after `version` was current, so the answer is at least that fresh.
    if (version !== null) this.remember(version, hash, principal);
    return principal;
  }

  private get registrationDigests(): Buffer[] {
    this.digests ??= this.settings.registrationKeyHashes.map((hex) => Buffer.from(hex, 'hex'));
    return this.digests;
  }

  private get brokerDigests(): Buffer[] {
    this.brokers ??= this.settings.brokerKeyHashes.map((hex) => Buffer.from(hex, 'hex'));
    return this.brokers;
  }

  private digests?: Buffer[];
  private brokers?: Buffer[];

  private remember(version: string, hash: string, principal: Principal): void {
    if (version !== this.cachedVersion || this.cached.size >= KEY_CACHE_ENTRIES) {
      this.cached.clear();
      this.cachedVersion = version;
    }
    this.cached.set(hash, principal);
  }
}

function matchesAny(hash: string, digests: Buffer[]): boolean {
  const presented = Buffer.from(hash, 'hex');
  let found = false;
  // Every digest is compared (no early exit), so timing does not say which one matched.
  for (const digest of digests) {
    if (timingSafeEqual(presented, digest)) found = true;
  }
  return found;
}
