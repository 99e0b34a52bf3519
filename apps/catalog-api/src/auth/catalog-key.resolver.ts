import { Inject, Injectable } from '@nestjs/common';
import { ApiKeyResolver, constantTimeEqual, Principal } from '@app/auth';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';

/** Resolves catalog keys. The global key comes from settings and is compared in constant time. */
@Injectable()
export class CatalogKeyResolver implements ApiKeyResolver {
  constructor(@Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings) {}

  resolve(apiKey: string): Promise<Principal | null> {
    const globalKey = this.settings.GLOBAL_API_KEY;
    if (globalKey !== undefined && constantTimeEqual(apiKey, globalKey)) {
      return Promise.resolve({ kind: 'global', name: 'global', canWrite: true });
    }
    return Promise.resolve(null);
  }
}
