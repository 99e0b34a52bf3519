import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { IMPORTS_QUEUE } from './import.queue';

/**
 * Turns the imports queue's connection errors (Redis or Postgres restarting) into structured log
 * lines. BullMQ reconnects by itself; without a listener it would print raw stack traces.
 */
@Injectable()
export class QueueErrorLogger implements OnModuleInit {
  private readonly logger = new Logger('Queue');

  constructor(@InjectQueue(IMPORTS_QUEUE) private readonly queue: Queue) {}

  onModuleInit(): void {
    this.queue.on('error', (error: Error) =>
      this.logger.warn({ err: error }, 'queue connection error; reconnecting'),
    );
  }
}
