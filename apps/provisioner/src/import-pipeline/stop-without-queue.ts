import type { INestApplicationContext } from '@nestjs/common';
import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { IMPORTS_QUEUE } from '../imports/import.queue';

/** How long the queue has to answer once SIGTERM has come before the worker stops without it. */
export const QUEUE_ANSWER_ON_STOP_MS = 2000;

/**
 * SIGTERM closes the worker gracefully: each running import hands itself back to the queue. A
 * worker that cannot reach its queue can hand nothing back, and BullMQ's close waits for the
 * connection, retrying for as long as the queue is down. So when the queue does not answer within
 * QUEUE_ANSWER_ON_STOP_MS of the signal the process exits at once: its jobs' locks lapse and
 * another worker resumes them (IMPORT_LOCK_MS), as after a crash, which the pipeline is built for.
 */
export function stopWithoutQueue(app: INestApplicationContext): void {
  const queue = app.get<Queue>(getQueueToken(IMPORTS_QUEUE));
  process.once('SIGTERM', () => {
    const answered = queue.getJobCounts('waiting').then(
      () => true,
      () => false,
    );
    const silent = new Promise<boolean>((done) =>
      setTimeout(() => done(false), QUEUE_ANSWER_ON_STOP_MS).unref(),
    );
    void Promise.race([answered, silent]).then((reachable) => {
      if (reachable) return;
      process.stderr.write(
        'SIGTERM: the queue cannot be reached, so no job can be handed back; stopping now (their locks lapse and another worker resumes them)\n',
      );
      process.exit(0);
    });
  });
}
