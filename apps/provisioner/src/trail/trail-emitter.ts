import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { JobsOptions, Queue } from 'bullmq';
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

/** Jobs written to the queue in one `addBulk` at most (more wait for the next write). */
export const TRAIL_WRITE_MAX = 1000;

type TrailJob = { name: TrailJobName; data: TrailEvent; opts: JobsOptions };

/** Events emitted since the last write began, and what their emitters await. */
interface Pending {
  jobs: TrailJob[];
  written: Promise<void>;
  settle: () => void;
}

/**
 * Puts events in the trail outbox. Emitting never fails and never waits on the catalog: the
 * job is written to the queue (milliseconds), and a queue that cannot take it is logged, not
 * passed on to the download, decision or import that emitted it. Emits nothing when no catalog
 * is configured (CATALOG_URL and CATALOG_API_KEY).
 *
 * Group commit (docs/decisions/provisioner-trail-group-commit.md): an emit resolves once its
 * events are in the queue, so a request is answered only after its event is stored (a process
 * that dies before that never answered it). One write is under way at a time, per process:
 * events emitted in the same turn of the event loop, or while a write is under way, go in the
 * next write together (one `addBulk`, in the order emitted), so many requests at once cost a
 * few round trips, not one each, and the queue's order is the order of the emits.
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
  /** Emitted, not yet being written. */
  private pending: Pending | undefined;
  /** A write is under way (or about to start): the next pending ones wait for it. */
  private writing = false;

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

  /** Queues the event, or the events in the order given; resolves once they are written. */
  emit(facts: TrailFacts | TrailFacts[]): Promise<void> {
    const events = Array.isArray(facts) ? facts : [facts];
    if (!this.on || events.length === 0) return Promise.resolve();
    const now = new Date().toISOString();
    let pending = this.pending;
    if (pending === undefined) {
      let settle!: () => void;
      const written = new Promise<void>((resolve) => (settle = resolve));
      pending = this.pending = { jobs: [], written, settle };
      // After every callback of this turn of the loop (setImmediate), so the emits of requests
      // handled in the same turn share the write; a write under way starts the next itself.
      if (!this.writing) {
        this.writing = true;
        setImmediate(() => void this.writeAll());
      }
    }
    for (const one of events) {
      const event = bounded({
        ...one,
        id: one.id ?? randomUUID(),
        occurred_at: one.occurred_at ?? now,
      });
      pending.jobs.push({
        name: TrailJobName.Report,
        data: event,
        // Kept after delivery when it headed one, for inspection and so an id queued again is
        // not delivered again; never removed on failure (a refused event is looked at, not lost).
        opts: { jobId: event.id, removeOnComplete: this.keep, removeOnFail: false },
      });
    }
    return pending.written;
  }

  /** Writes what is pending, then what was emitted meanwhile, until nothing is left. */
  private async writeAll(): Promise<void> {
    try {
      for (let next = this.pending; next !== undefined; next = this.pending) {
        this.pending = undefined;
        try {
          for (let from = 0; from < next.jobs.length; from += TRAIL_WRITE_MAX) {
            await this.write(next.jobs.slice(from, from + TRAIL_WRITE_MAX));
          }
        } finally {
          next.settle();
        }
      }
    } finally {
      this.writing = false;
    }
  }

  /** One round trip for the lot; a failure is logged with every event it held, never thrown. */
  private async write(jobs: TrailJob[]): Promise<void> {
    try {
      if (jobs.length === 1) await this.queue.add(jobs[0].name, jobs[0].data, jobs[0].opts);
      else await this.queue.addBulk(jobs);
    } catch (error) {
      // Each event whole, so none is lost without a trace: the log is where it can be taken
      // from (on Redis some of a bulk may have been written: their ids queue them once).
      this.logger.error(
        { events: jobs.map((job) => job.data), error: (error as Error).message },
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
