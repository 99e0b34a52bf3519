import { Module } from '@nestjs/common';
import { AccessExpiryScheduler } from './access-expiry.scheduler';
import { AccessExpiryService } from './access-expiry.service';

@Module({
  providers: [AccessExpiryService, AccessExpiryScheduler],
  exports: [AccessExpiryService],
})
export class AccessesModule {}
