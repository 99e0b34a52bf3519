import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireKinds } from '@app/auth';
import type { Principal } from '@app/auth';
import { actorFromPrincipal } from '../audit/audit.service';
import { ApiCall } from '../common/api-docs';
import { SuccessStatus } from '../common/response-properties';
import {
  ReplayedDeadLetters,
  CreateSubscriptionBody,
  DeadLetterList,
  ReplayBody,
  SubscriptionIdParams,
  SubscriptionList,
  SubscriptionView,
} from './webhooks.dto';
import { WebhooksService } from './webhooks.service';

/** Webhook subscriptions to the audit trail's events (docs/integrations.md, event webhooks). */
@ApiTags('admin')
@Controller('api/admin/subscriptions')
@RequireKinds('global')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @ApiCall({
    summary: 'Subscribe a URL to the trail’s events, as Standard Webhooks messages',
    caller: 'global key only',
    description:
      'Messages start with the next event. Without `secret` one is made and shown only in ' +
      'this answer. Plain http only where WEBHOOK_ALLOW_HTTP is on.',
    body: CreateSubscriptionBody,
    responses: [{ status: 201, description: 'Subscribed', body: SubscriptionView }],
  })
  @Post()
  create(@Body() body: CreateSubscriptionBody, @CurrentPrincipal() principal?: Principal) {
    return this.webhooks.create(body, actorFromPrincipal(principal));
  }

  @ApiCall({
    summary: 'The subscriptions (their secrets never shown)',
    caller: 'global key only',
    responses: [{ status: 200, description: 'Every subscription', body: SubscriptionList }],
  })
  @Get()
  async list(): Promise<SubscriptionList> {
    return { results: await this.webhooks.list() };
  }

  @ApiCall({
    summary: 'End a subscription (its undelivered messages are dropped)',
    caller: 'global key only',
    responses: [{ status: 200, description: 'Ended', body: SuccessStatus }],
    errors: [404],
  })
  @Delete(':id')
  remove(@Param() { id }: SubscriptionIdParams, @CurrentPrincipal() principal?: Principal) {
    return this.webhooks.remove(id, actorFromPrincipal(principal));
  }

  @ApiCall({
    summary: 'The dead letters: messages whose retries are spent, oldest first',
    caller: 'global key only',
    responses: [{ status: 200, description: 'At most 1,000', body: DeadLetterList }],
    errors: [404],
  })
  @Get(':id/dead-letters')
  async deadLetters(@Param() { id }: SubscriptionIdParams): Promise<DeadLetterList> {
    return { results: await this.webhooks.deadLetters(id) };
  }

  @ApiCall({
    summary: 'Send dead letters again (all, or those named)',
    caller: 'global key only',
    body: ReplayBody,
    responses: [{ status: 200, description: 'Queued again', body: ReplayedDeadLetters }],
    errors: [404],
  })
  @Post(':id/dead-letters/replay')
  @HttpCode(200)
  replay(
    @Param() { id }: SubscriptionIdParams,
    @Body() body: ReplayBody,
    @CurrentPrincipal() principal?: Principal,
  ) {
    return this.webhooks.replay(id, body.ids, actorFromPrincipal(principal));
  }
}
