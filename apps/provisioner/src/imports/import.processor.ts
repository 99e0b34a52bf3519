import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Job, UnrecoverableError } from 'bullmq';
import { ImportJobName, ImportJobResults, IMPORTS_QUEUE } from './imports.queue';

type Handlers = { [K in ImportJobName]: (job: Job) => Promise<ImportJobResults[K]> };

/**
 * Runs in the worker process only. Every job name must have a handler: the `Handlers` type
 * makes a missing one a compile error, and an unknown name fails permanently.
 */
@Processor(IMPORTS_QUEUE)
export class ImportProcessor extends WorkerHost {
  private readonly handlers: Handlers = {
    [ImportJobName.Ping]: () => Promise.resolve({ pong: true, receivedAt: new Date().toISOString() }),
  };

  process(job: Job): Promise<unknown> {
    const handler = this.handlers[job.name as ImportJobName] as ((job: Job) => Promise<unknown>) | undefined;
    if (!handler) throw new UnrecoverableError(`no handler for job ${job.name}`);
    return handler(job);
  }
}
