import { Controller, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireKinds } from '@app/auth';
import type { Principal } from '@app/auth';
import { actorFromPrincipal } from '../audit/audit.service';
import { ApiCall } from '../common/api-docs';
import { SyncAnswer } from '../common/response-properties';
import { IdpSyncService, SyncCounts } from './idp-sync.service';

@ApiTags('integrations')
@Controller('api/idp')
export class IdpSyncController {
  constructor(private readonly sync: IdpSyncService) {}

  /** Runs the synchronisation now and answers with its counts (spec §4). */
  @ApiCall({
    summary: 'Synchronise people with the identity provider now',
    caller: 'global key only',
    description:
      'Matches every verified user of the identity provider to a user or contact, updates ' +
      'names, email and subject, and creates contacts for the unknown; never deletes. One ' +
      'synchronisation at a time across replicas (another running is a 409); the identity ' +
      'provider unreachable or not configured is a 503.',
    responses: [
      {
        status: 200,
        description: 'Done',
        body: SyncAnswer,
      },
    ],
    errors: [409],
  })
  @Post('force')
  @HttpCode(200)
  @RequireKinds('global')
  async force(
    @CurrentPrincipal() principal: Principal,
  ): Promise<{ status: 'Success' } & SyncCounts> {
    return { status: 'Success', ...(await this.sync.run(actorFromPrincipal(principal))) };
  }
}
