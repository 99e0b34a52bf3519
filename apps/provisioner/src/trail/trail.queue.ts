import { createHash } from 'node:crypto';

/**
 * The trail outbox: every event the provisioner reports to the catalog's access trail (its
 * `POST /api/trail/events`) is first in a job of this queue, written where it happens (a DRS
 * decision, a byte read, a published import), never a call to the catalog. One job per emit:
 * one event, or the events of a bulk decision in order. The worker delivers the jobs' events in
 * the queue's order, up to TRAIL_BATCH_MAX in one request
 * (docs/decisions/provisioner-trail-outbox.md, provisioner-trail-group-commit.md).
 */
export const TRAIL_QUEUE = 'catalog-trail';

export enum TrailJobName {
  /** Reports one event to the catalog's trail: the data is the event, the job id its id. */
  Report = 'report',
  /**
   * Reports the events of one emit (a bulk DRS decision), in order: the data is
   * `{ events }`, the job id `trailEventsJobId(events)`.
   */
  ReportEvents = 'report-events',
}

/** What the provisioner reports, as the catalog's ReportedEventInput names it. */
export type TrailEventType =
  'drs_object.allow' | 'drs_object.refuse' | 'drs_object.serve' | 'import.publish';

/** One event, as sent: the body of one entry of `POST /api/trail/events`. */
export interface TrailEvent {
  /** Chosen here, once: the job id, and the catalog's idempotency key. */
  id: string;
  type: TrailEventType;
  occurred_at: string;
  /** The DRS object id, or the import id. */
  object_id: string;
  subject?: string;
  /** The dataset's catalog accession. */
  dataset?: string;
  /** The `jti` of the catalog's visa that granted the dataset. */
  visa?: string;
  reason?: string;
  range_start?: number;
  bytes?: number;
  location?: string;
}

/** The data of a `ReportEvents` job. */
export interface TrailEventsData {
  events: TrailEvent[];
}

/** What a delivery came to, in events. */
export interface TrailReportResult {
  recorded: number;
  already: number;
}

/** What each job name returns: the processor's handler map is typed by it. */
export interface TrailJobResults {
  [TrailJobName.Report]: TrailReportResult;
  [TrailJobName.ReportEvents]: TrailReportResult;
}

/**
 * The id of a `ReportEvents` job: its number of events and a digest of their ids, in order.
 * The same events emitted again (a retried request that chose its ids) queue once; the number
 * lets the worker count a waiting job's events from its id alone (eventsInTrailJob).
 */
export function trailEventsJobId(events: readonly TrailEvent[]): string {
  const hash = createHash('sha256');
  for (const event of events) hash.update(event.id).update('\n');
  return `events-${events.length}-${hash.digest('hex').slice(0, 32)}`;
}

const EVENTS_JOB_ID = /^events-([1-9][0-9]*)-[0-9a-f]{32}$/;

/** Events a job holds, from its id: a `ReportEvents` job's number, else one. */
export function eventsInTrailJob(jobId: string): number {
  const match = EVENTS_JOB_ID.exec(jobId);
  return match === null ? 1 : Number(match[1]);
}

/**
 * The events of a job's data, in order: a `ReportEvents` job's `events`, or the event itself
 * (a `Report` job, also as written by earlier versions). Undefined when it holds neither.
 */
export function trailEventsOf(data: unknown): TrailEvent[] | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const events = (data as Partial<TrailEventsData>).events;
  if (Array.isArray(events)) return events;
  return typeof (data as Partial<TrailEvent>).id === 'string' ? [data as TrailEvent] : undefined;
}

/**
 * Events per delivery: the catalog's limit on one report (REPORTED_EVENTS_MAX). A batch is what
 * waits in the queue when a delivery starts, TRAIL_BATCH_WAIT_MS after its head was queued at
 * the latest (a backlog's old head goes at once); a job holding more events than this goes in
 * several requests, in order.
 */
export const TRAIL_BATCH_MAX = 500;

/** The catalog's limits on a reported field: longer text is cut, never refused. */
export const TRAIL_TEXT_MAX = { object_id: 255, subject: 255, dataset: 255, visa: 255 } as const;
export const TRAIL_LONG_TEXT_MAX = 2000;

/**
 * A UUID (RFC 9562 version 8, lowercase) derived from `parts`: an event that may be reached
 * twice (an import attempt retried after publishing) gets the same id each time, so it is
 * queued once and recorded once.
 */
export function derivedEventId(...parts: string[]): string {
  const hex = createHash('sha256').update(parts.join('\n')).digest('hex');
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Waiting after the n-th delivery in a row that failed: CATALOG_RETRY_DELAY_MS × 2^(n−1), at
 * most TRAIL_MAX_BACKOFF_MS. Never given up: the event waits at the head of the queue, the
 * later ones behind it, until the catalog answers.
 */
export const TRAIL_MAX_BACKOFF_MS = 60_000;

export function trailBackoffMs(failuresInARow: number, delayMs: number): number {
  return Math.min(TRAIL_MAX_BACKOFF_MS, delayMs * 2 ** Math.max(0, failuresInARow - 1));
}
