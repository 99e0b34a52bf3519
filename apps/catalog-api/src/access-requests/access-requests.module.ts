import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { IdentityModule } from '../identity/identity.module';
import { AccessRequestRefusalsService } from './access-request-refusals.service';
import { AccessRequestsController } from './access-requests.controller';
import { AccessRequestsService } from './access-requests.service';

@Module({
  imports: [IdentityModule, AuditModule],
  controllers: [AccessRequestsController],
  providers: [AccessRequestsService, AccessRequestRefusalsService],
  exports: [AccessRequestRefusalsService],
})
export class AccessRequestsModule {}
