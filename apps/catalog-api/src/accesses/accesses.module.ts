import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { AccessExpiryScheduler } from './access-expiry.scheduler';
import { AccessExpiryService } from './access-expiry.service';

@Module({
  imports: [AuditModule],
  providers: [AccessExpiryService, AccessExpiryScheduler],
  exports: [AccessExpiryService],
})
export class AccessesModule {}
