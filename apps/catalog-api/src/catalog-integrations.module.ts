import { Module } from '@nestjs/common';
import { AccessRequestsModule } from './access-requests/access-requests.module';
import { AccessesModule } from './accesses/accesses.module';
import { Ga4ghModule } from './ga4gh/ga4gh.module';
import { IdentityModule } from './identity/identity.module';

/**
 * The catalog's integrations (§4): access-request webhook, identity provider, access expiry,
 * GA4GH visas.
 */
@Module({
  imports: [IdentityModule, AccessRequestsModule, AccessesModule, Ga4ghModule],
})
export class CatalogIntegrationsModule {}
