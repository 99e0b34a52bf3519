import { Body, Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import { Public } from '@app/auth';
import { AccessRequestGuard } from './access-request.guard';
import { AccessRequestsService, BatchCounts } from './access-requests.service';
import { parseEntitlements } from './entitlement';

type BatchResult = { status: 'Success' } & BatchCounts;

/**
 * The REMS entitlement webhook (spec §4). No API key: REMS cannot send one, so the routes are
 * public to the key guard and gated by the integration switch and the caller allow-list.
 */
@Controller('api/accessreq')
@Public()
@UseGuards(AccessRequestGuard)
export class AccessRequestsController {
  constructor(private readonly service: AccessRequestsService) {}

  @Post()
  @HttpCode(200)
  async grant(@Body() body: unknown): Promise<BatchResult> {
    return { status: 'Success', ...(await this.service.grant(parseEntitlements(body))) };
  }

  @Post('revoke')
  @HttpCode(200)
  async revoke(@Body() body: unknown): Promise<BatchResult> {
    return { status: 'Success', ...(await this.service.revoke(parseEntitlements(body))) };
  }
}
