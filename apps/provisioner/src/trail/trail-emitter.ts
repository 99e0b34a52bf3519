import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { JobsOptions, Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { Histogram, Registry } from 'prom-client';
import { METRICS_REGISTRY } from '@app/platform';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';
import {
  TRAIL_LONG_TEXT_MAX,
  TRAIL_QUEUE,
  TRAIL_TEXT_MAX,
  TrailEvent,
  trailEventsJobId,
  TrailEventsData,
  TrailJobName,
} from './trail.queue';

/** An event as its producer states it; the id and time are filled in unless given. */
export type TrailFacts = Omit<TrailEvent, 'id' | 'occurred_at'> &
  Partial<Pick<TrailEvent, 'id' | 'occurred_at'>>;

/**
 * Events written to the queue in one `addBulk` at most (more wait for the next write; a job is
 * never split, so one emit of more is a write of its own).
 */
export const TRAIL_WRITE_MAX = 1000;

/**
 * The buckets of `provisioner_trail_append_seconds`: fine below 5 ms, where a write on a
 * healthy queue lands, so its p99 can be read against a request's.
 */
export const TRAIL_APPEND_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.00075, 0.001, 0.0015, 0.002, 0.003, 0.005, 0.01, 0.025, 0.1, 1, 10,
];

/** One job per emit: its events, in order, in `events` (kept for the write and its log). */
type TrailJob = {
  name: TrailJobName;
  data: TrailEvent | TrailEventsData;
  opts: JobsOptions;
  events: TrailEvent[];
  /** performance.now() at the emit, for the wait its emitter is told of. */
  emittedAt: number;
};

/** Emits since the last write began, and what their emitters await. */
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
 * One job per emit (docs/decisions/provisioner-trail-group-commit.md): a bulk decision's
 * thousand events are one job holding them in order, not a thousand jobs. Group commit: an emit
 * resolves once its job is in the queue, so a request is answered only after its events are
 * stored (a process that dies before that never answered it). One write is under way at a time,
 * per process: the jobs of emits made in the same turn of the event loop, or while a write is
 * under way, go in the next write together (one `addBulk`, in the order emitted), so many
 * requests at once cost a few round trips, not one each, and the queue's order is the order of
 * the emits.
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
  /** From an emit to its write's end: what a request waits for before it answers. */
  private readonly waits: Histogram | undefined;

  constructor(
    @InjectQueue(TRAIL_QUEUE) private readonly queue: Queue,
    @Inject(PROVISIONER_SETTINGS) settings: ProvisionerSettings,
    @Optional() @Inject(METRICS_REGISTRY) registry?: Registry,
  ) {
    // Its connection errors are logged with every queue's (QueueErrorLogger).
    this.on = settings.catalogRegistration !== null;
    this.waits =
      registry === undefined || !this.on
        ? undefined
        : new Histogram({
            name: 'provisioner_trail_append_seconds',
            help: "Time from a trail emit to its events stored in the queue (or the write's failure): what a DRS decision, a read or a publication waits for before it goes on",
            buckets: TRAIL_APPEND_BUCKETS,
            registers: [registry],
          });
  }

  get enabled(): boolean {
    return this.on;
  }

  /**
   * Queues the event, or the events in the order given, as one job; resolves once it is written.
   * One event is a `Report` job (its id the event's), more a `ReportEvents` job holding them all.
   */
  emit(facts: TrailFacts | TrailFacts[]): Promise<void> {
    if (!this.on) return Promise.resolve();
    const many = Array.isArray(facts);
    if (many && facts.length === 0) return Promise.resolve();
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
    // Kept after delivery when it headed one, for inspection and so an id queued again is not
    // delivered again; never removed on failure (a refused event is looked at, not lost).
    if (!many || facts.length === 1) {
      const event = trailEvent(many ? facts[0] : facts, now);
      pending.jobs.push({
        name: TrailJobName.Report,
        data: event,
        opts: { jobId: event.id, removeOnComplete: this.keep, removeOnFail: false },
        events: [event],
        emittedAt: performance.now(),
      });
    } else {
      const events = facts.map((one) => trailEvent(one, now));
      pending.jobs.push({
        name: TrailJobName.ReportEvents,
        data: { events },
        opts: { jobId: trailEventsJobId(events), removeOnComplete: this.keep, removeOnFail: false },
        events,
        emittedAt: performance.now(),
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
          for (let from = 0; from < next.jobs.length;) {
            let to = from + 1;
            let events = next.jobs[from].events.length;
            while (
              to < next.jobs.length &&
              events + next.jobs[to].events.length <= TRAIL_WRITE_MAX
            ) {
              events += next.jobs[to].events.length;
              to += 1;
            }
            await this.write(next.jobs.slice(from, to));
            from = to;
          }
        } finally {
          next.settle();
          this.observe(next.jobs);
        }
      }
    } finally {
      this.writing = false;
    }
  }

  private observe(jobs: TrailJob[]): void {
    if (this.waits === undefined) return;
    const now = performance.now();
    for (const job of jobs) this.waits.observe((now - job.emittedAt) / 1000);
  }

  /** One round trip for the lot; a failure is logged with every event it held, never thrown. */
  private async write(jobs: TrailJob[]): Promise<void> {
    try {
      if (jobs.length === 1) await this.queue.add(jobs[0].name, jobs[0].data, jobs[0].opts);
      else await this.queue.addBulk(jobs.map(({ name, data, opts }) => ({ name, data, opts })));
    } catch (error) {
      // Each event whole, so none is lost without a trace: the log is where it can be taken
      // from (on Redis some of a bulk may have been written: their ids queue them once).
      this.logger.error(
        { events: jobs.flatMap((job) => job.events), error: (error as Error).message },
        'trail events not queued (the queue is unreachable)',
      );
    }
  }
}

/**
 * The event as sent: its id and time filled in, text cut to what the catalog takes (a long path
 * or reason is still reported), empty fields left out. Built field by field, once: a bulk
 * decision makes a thousand of these per request.
 */
function trailEvent(facts: TrailFacts, now: string): TrailEvent {
  const event = {
    id: facts.id || randomUUID(),
    type: facts.type,
    occurred_at: facts.occurred_at || now,
  } as TrailEvent;
  if (facts.object_id) event.object_id = cut(facts.object_id, TRAIL_TEXT_MAX.object_id);
  if (facts.subject) event.subject = cut(facts.subject, TRAIL_TEXT_MAX.subject);
  if (facts.dataset) event.dataset = cut(facts.dataset, TRAIL_TEXT_MAX.dataset);
  if (facts.visa) event.visa = cut(facts.visa, TRAIL_TEXT_MAX.visa);
  if (facts.reason) event.reason = cut(facts.reason, TRAIL_LONG_TEXT_MAX);
  if (facts.range_start !== undefined) event.range_start = facts.range_start;
  if (facts.bytes !== undefined) event.bytes = facts.bytes;
  if (facts.location) event.location = cut(facts.location, TRAIL_LONG_TEXT_MAX);
  return event;
}

function cut(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) : text;
}
