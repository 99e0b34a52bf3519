import { Controller, HttpCode, Post } from '@nestjs/common';
import { CurrentPrincipal, RequireKinds } from '@app/auth';
import type { Principal } from '@app/auth';
import { actorFromPrincipal } from '../audit/audit.service';
import { IdpSyncService, SyncCounts } from './idp-sync.service';

@Controller('api/idp')
export class IdpSyncController {
  constructor(private readonly sync: IdpSyncService) {}

  /** Runs the synchronisation now and answers with its counts (spec §4). */
  @Post('force')
  @HttpCode(200)
  @RequireKinds('global')
  async force(
    @CurrentPrincipal() principal: Principal,
  ): Promise<{ status: 'Success' } & SyncCounts> {
    return { status: 'Success', ...(await this.sync.run(actorFromPrincipal(principal))) };
  }
}
