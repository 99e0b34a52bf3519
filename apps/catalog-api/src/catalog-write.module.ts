import { Module } from '@nestjs/common';
import { AdminModule } from './admin/admin.module';
import { AuditModule } from './audit/audit.module';
import { ImportsModule } from './imports/imports.module';

/** The write side of the catalog contract (§5): imports, administration, the audit trail. */
@Module({
  imports: [AuditModule, ImportsModule, AdminModule],
  exports: [AuditModule, ImportsModule, AdminModule],
})
export class CatalogWriteModule {}
