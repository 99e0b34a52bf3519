import { Module } from '@nestjs/common';
import { IdentityModule } from '../identity/identity.module';
import { AccessRequestGuard } from './access-request.guard';
import { AccessRequestsController } from './access-requests.controller';
import { AccessRequestsService } from './access-requests.service';
import { RequestAccessesRepository } from './request-accesses.repository';

@Module({
  imports: [IdentityModule],
  controllers: [AccessRequestsController],
  providers: [AccessRequestGuard, AccessRequestsService, RequestAccessesRepository],
})
export class AccessRequestsModule {}
