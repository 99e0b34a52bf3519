import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { AuditCrateController } from './audit-crate.controller';
import { AuditCrateService } from './audit-crate.service';

/** The auditor's export of a project (`GET /api/projects/{acronym}/audit-crate`, the CLI's `audit-crate`). */
@Module({
  imports: [AuditModule],
  controllers: [AuditCrateController],
  providers: [AuditCrateService],
  exports: [AuditCrateService],
})
export class AuditCrateModule {}
