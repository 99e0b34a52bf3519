import { Module } from '@nestjs/common';
import { AccessRequestsModule } from './access-requests/access-requests.module';
import { AccessesModule } from './accesses/accesses.module';
import { IdentityModule } from './identity/identity.module';

/** The catalog's integrations (§4): access-request webhook, identity provider, access expiry. */
@Module({
  imports: [IdentityModule, AccessRequestsModule, AccessesModule],
})
export class CatalogIntegrationsModule {}
