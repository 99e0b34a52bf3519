import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { BullModule, InjectQueue } from '@nestjs/bullmq';
import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { STORAGE_REGISTRATION_QUEUE } from '../storage-registration/storage-registration.queue';
import { IMPORTS_QUEUE } from '../imports/import.queue';
import { TRAIL_QUEUE } from '../trail/trail.queue';
import { QueueDashboardAuthMiddleware } from './queue-dashboard-auth.middleware';

export const QUEUE_DASHBOARD_ROUTE = '/admin/queues';

/**
 * Bull Board over the imports, catalog-registration and catalog-trail queues at /admin/queues,
 * behind the write key (a registration that gave up is retried from there). Mounted by hand
 * rather than through @bull-board/nestjs: that package pulls in @nestjs/bull-shared 12, which
 * is ESM-only and cannot be loaded by jest on Node 20 (see reference/stack.md).
 */
@Module({
  imports: [
    BullModule.registerQueue({ name: STORAGE_REGISTRATION_QUEUE }),
    BullModule.registerQueue({ name: TRAIL_QUEUE }),
  ],
})
export class QueueDashboardModule implements NestModule {
  constructor(
    @InjectQueue(IMPORTS_QUEUE) private readonly queue: Queue,
    @InjectQueue(STORAGE_REGISTRATION_QUEUE) private readonly registrations: Queue,
    @InjectQueue(TRAIL_QUEUE) private readonly trail: Queue,
  ) {}

  configure(consumer: MiddlewareConsumer): void {
    const serverAdapter = new ExpressAdapter();
    serverAdapter.setBasePath(QUEUE_DASHBOARD_ROUTE);
    createBullBoard({
      queues: [
        new BullMQAdapter(this.queue),
        new BullMQAdapter(this.registrations),
        new BullMQAdapter(this.trail),
      ],
      serverAdapter,
      options: { uiConfig: { boardTitle: 'Provisioner queues' } },
    });
    // The board is an Express app of its own: it names its framework unless told not to, as
    // the API's own app is (configureHttpApp).
    const board = serverAdapter.getRouter() as ((...args: unknown[]) => void) & {
      disable(setting: string): unknown;
    };
    board.disable('x-powered-by');
    // The middleware runs for the route and everything below it: pages, assets and JSON API.
    // eslint-disable-next-line no-restricted-syntax -- MiddlewareConsumer.apply, not Function's
    consumer.apply(QueueDashboardAuthMiddleware, board).forRoutes(QUEUE_DASHBOARD_ROUTE);
  }
}
