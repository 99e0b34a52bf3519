import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { Queue } from 'bullmq';
import { IMPORTS_QUEUE } from './import.queue';

/** How long start-up waits for the queue's first connection before serving without it. */
const FIRST_CONNECTION_WAIT_MS = 10_000;

/**
 * Turns every queue's connection errors (Redis or Postgres restarting, a failover) into
 * structured log lines: each queue a module of the process registered, whichever it is. BullMQ
 * reconnects by itself; a queue without a listener prints raw stack traces instead
 * (`console.error` of an "Unhandled error" event).
 *
 * Start-up also waits, bounded, for the first connection: the API's Redis client queues no
 * commands while disconnected (an outage answers 503 at once), so without this wait the first
 * requests after start, sent before the connection is up, would be refused too. When Redis is
 * down at start the process serves anyway and readiness says why.
 */
@Injectable()
export class QueueErrorLogger implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger('Queue');

  constructor(
    @InjectQueue(IMPORTS_QUEUE) private readonly queue: Queue,
    private readonly discovery: DiscoveryService,
  ) {}

  onModuleInit(): void {
    // A queue registered in two modules is two instances: each gets its listener.
    for (const { instance } of this.discovery.getProviders()) {
      if (!(instance instanceof Queue)) continue;
      const queue = instance;
      queue.on('error', (error: Error) =>
        this.logger.warn({ err: error }, `queue ${queue.name}: connection error; reconnecting`),
      );
    }
  }

  async onApplicationBootstrap(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), FIRST_CONNECTION_WAIT_MS);
    });
    const ready = this.queue.waitUntilReady().then(
      () => 'ready' as const,
      () => 'late' as const,
    );
    if ((await Promise.race([ready, deadline])) === 'late')
      this.logger.warn(
        { waited_ms: FIRST_CONNECTION_WAIT_MS },
        'the queue is not reachable yet; serving, and readiness reports it',
      );
    clearTimeout(timer);
  }
}
