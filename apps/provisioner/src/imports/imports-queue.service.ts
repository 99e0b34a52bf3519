import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { Job, Queue } from 'bullmq';
import { ImportJobName, ImportJobPayloads, IMPORTS_QUEUE } from './imports.queue';

/** The API side of the imports queue: enqueues work; never processes it. */
@Injectable()
export class ImportsQueueService {
  constructor(@InjectQueue(IMPORTS_QUEUE) private readonly queue: Queue) {}

  ping(id: string): Promise<Job<ImportJobPayloads[ImportJobName.Ping]>> {
    return this.queue.add(
      ImportJobName.Ping,
      { sentAt: new Date().toISOString() },
      { jobId: `ping-${id}`, removeOnComplete: 100, removeOnFail: 100 },
    );
  }
}
