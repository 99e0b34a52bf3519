import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { IdpSyncController } from './idp-sync.controller';
import { IdpSyncScheduler } from './idp-sync.scheduler';
import { IdpSyncService } from './idp-sync.service';
import { KeycloakAdminClient } from './keycloak-admin.client';
import { PeopleRepository } from './people.repository';

/**
 * The identity provider (Keycloak): its admin client, person matching shared with the
 * access-request webhook, and the synchronisation (on demand and scheduled).
 */
@Module({
  imports: [AuditModule],
  controllers: [IdpSyncController],
  providers: [KeycloakAdminClient, PeopleRepository, IdpSyncService, IdpSyncScheduler],
  exports: [KeycloakAdminClient, PeopleRepository, IdpSyncService],
})
export class IdentityModule {}
