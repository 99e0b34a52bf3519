import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';
import {
  TRAIL_LONG_TEXT_MAX,
  TRAIL_QUEUE,
  TRAIL_TEXT_MAX,
  TrailEvent,
  TrailJobName,
} from './trail.queue';

/** An event as its producer states it; the id and time are filled in unless given. */
export type TrailFacts = Omit<TrailEvent, 'id' | 'occurred_at'> &
  Partial<Pick<TrailEvent, 'id' | 'occurred_at'>>;

/**
 * Puts events in the trail outbox. Emitting never fails and never waits on the catalog: the
 * job is written to the queue (milliseconds), and a queue that cannot take it is logged, not
 * passed on to the download, decision or import that emitted it. Emits nothing when no catalog
 * is configured (CATALOG_URL and CATALOG_API_KEY).
 */
@Injectable()
export class TrailEmitter {
  private readonly logger = new Logger(TrailEmitter.name);
  private readonly on: boolean;
  /**
   * Completed jobs kept (the head of each delivery; the jobs delivered behind it are removed):
   * their ids make a repeated event (a retried import) queue once. The catalog's event id is
   * what makes it recorded once.
   */
  private readonly keep = { age: 7 * 86_400, count: 100_000 };

  constructor(
    @InjectQueue(TRAIL_QUEUE) private readonly queue: Queue,
    @Inject(PROVISIONER_SETTINGS) settings: ProvisionerSettings,
  ) {
    // Its connection errors are logged with every queue's (QueueErrorLogger).
    this.on = settings.catalogRegistration !== null;
  }

  get enabled(): boolean {
    return this.on;
  }

  /** Queues the event, or the events in the order given. */
  async emit(facts: TrailFacts | TrailFacts[]): Promise<void> {
    const events = Array.isArray(facts) ? facts : [facts];
    if (!this.on || events.length === 0) return;
    const now = new Date().toISOString();
    const jobs = events.map((one) => {
      const event = bounded({
        ...one,
        id: one.id ?? randomUUID(),
        occurred_at: one.occurred_at ?? now,
      });
      return {
        name: TrailJobName.Report,
        data: event,
        // Kept after delivery when it headed one, for inspection and so an id queued again is
        // not delivered again; never removed on failure (a refused event is looked at, not lost).
        opts: { jobId: event.id, removeOnComplete: this.keep, removeOnFail: false },
      };
    });
    try {
      if (jobs.length === 1) await this.queue.add(jobs[0].name, jobs[0].data, jobs[0].opts);
      else await this.queue.addBulk(jobs);
    } catch (error) {
      this.logger.error(
        { events: events.map((e) => e.type), error: (error as Error).message },
        'trail events not queued (the queue is unreachable)',
      );
    }
  }
}

/** Text cut to what the catalog takes (a long path or reason is still reported). */
function bounded(event: TrailEvent): TrailEvent {
  const out: TrailEvent = { ...event };
  for (const [key, max] of Object.entries(TRAIL_TEXT_MAX) as [
    keyof typeof TRAIL_TEXT_MAX,
    number,
  ][]) {
    const value = out[key];
    if (typeof value === 'string') out[key] = value.slice(0, max);
  }
  if (out.reason !== undefined) out.reason = out.reason.slice(0, TRAIL_LONG_TEXT_MAX);
  if (out.location !== undefined) out.location = out.location.slice(0, TRAIL_LONG_TEXT_MAX);
  for (const key of Object.keys(out) as (keyof TrailEvent)[]) {
    if (out[key] === undefined || out[key] === '') delete out[key];
  }
  return out;
}
