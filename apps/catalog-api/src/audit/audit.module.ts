import { Module } from '@nestjs/common';
import { AuditService } from './audit.service';

/** The audit trail; import it wherever a write happens and call `AuditService.record`. */
@Module({
  providers: [AuditService],
  exports: [AuditService],
})
export class AuditModule {}
