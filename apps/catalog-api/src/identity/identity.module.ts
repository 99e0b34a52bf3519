import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { IdpSyncController } from './idp-sync.controller';
import { IdpSyncScheduler } from './idp-sync.scheduler';
import { IdpSyncService } from './idp-sync.service';
import { KeycloakAdminClient } from './keycloak-admin.client';

/**
 * The identity provider (Keycloak): its admin client and the synchronisation (on demand and
 * scheduled). Person matching (PeopleRepository) is shared with the access-request webhook.
 */
@Module({
  imports: [AuditModule],
  controllers: [IdpSyncController],
  providers: [KeycloakAdminClient, IdpSyncService, IdpSyncScheduler],
  exports: [KeycloakAdminClient, IdpSyncService],
})
export class IdentityModule {}
