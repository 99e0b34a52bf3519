import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { CatalogVersionModule } from '../catalog-version/catalog-version.module';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhooksController } from './webhooks.controller';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksService } from './webhooks.service';

/** Subscriptions to the trail's events, and the sender of their outbox. */
@Module({
  imports: [AuditModule, CatalogVersionModule],
  controllers: [WebhooksController],
  providers: [WebhooksService, WebhooksRepository, WebhookDispatcher],
  exports: [WebhooksService],
})
export class WebhooksModule {}
