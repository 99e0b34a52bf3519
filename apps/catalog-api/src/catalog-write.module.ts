import { Module } from '@nestjs/common';
import { AdminModule } from './admin/admin.module';
import { AuditModule } from './audit/audit.module';
import { AuditCrateModule } from './audit-crate/audit-crate.module';
import { ImportsModule } from './catalog-imports/imports.module';
import { StorageRegistrationsModule } from './storage-registrations/storage-registrations.module';
import { WebhooksModule } from './webhooks/webhooks.module';

/**
 * The write side of the catalog contract (§5): imports, administration, the audit trail, and the
 * provisioner's storage registrations, webhook subscriptions to the trail, and the auditor's
 * export of a project's trail.
 */
@Module({
  imports: [
    AuditModule,
    AuditCrateModule,
    ImportsModule,
    AdminModule,
    StorageRegistrationsModule,
    WebhooksModule,
  ],
  exports: [AuditModule, AuditCrateModule, ImportsModule, AdminModule, WebhooksModule],
})
export class CatalogWriteModule {}
