import { Module } from '@nestjs/common';
import { AuditEventsController } from './audit-events.controller';
import { AuditSigner } from './audit-signer';
import { AuditTrailService } from './audit-trail.service';
import { AuditService } from './audit.service';

/**
 * The audit trail; import it wherever a write happens and call `AuditService.record`. Also the
 * route through which the provisioner reports its events, and the trail's checks and pruning.
 */
@Module({
  controllers: [AuditEventsController],
  providers: [AuditService, AuditTrailService, AuditSigner],
  exports: [AuditService, AuditTrailService, AuditSigner],
})
export class AuditModule {}
