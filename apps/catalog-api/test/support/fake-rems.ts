/**
 * REMS's entitlement push (`:entitlements-target`), built the way CSCfi/rems builds it, so the
 * webhook is tested against what REMS really sends. Followed:
 * - `src/clj/rems/db/entitlements.clj`: `grant-entitlements!` inserts a row per resource and
 *   queues an :add delivery holding *every* row of that (application, user, resource), ended
 *   ones included; `revoke-entitlements!` ends the rows at `(time/now)` and queues a :remove
 *   delivery with the same rows; `post-entitlements!` POSTs them as a JSON array of
 *   `{application, resource, user, mail, end}` with `:content-type :json`, a 2.5 s socket and
 *   connection time-out, and counts only status 200 as delivered.
 * - `resources/sql/queries.sql`: `end-entitlements!` sets `endt` on all rows of the key (no
 *   condition on rows already ended); `get-entitlements` orders by user, resource,
 *   application, start, end.
 * - `src/clj/rems/json.clj` (Joda times through Jackson): `end` is written like
 *   `2003-10-11T00:00:00.000Z`, or null.
 * - `src/clj/rems/db/outbox.clj`: each delivery is its own outbox entry, retried on its own
 *   schedule until a deadline a day later, so deliveries can arrive out of order. Here a test
 *   says which pending deliveries are attempted, and in which order.
 */

/** A row of REMS's `entitlement` table, as `get-entitlements` returns it. */
interface EntitlementRow {
  application: number;
  resource: string;
  user: string;
  start: number;
  end: number | null;
}

export type RemsAction = 'add' | 'remove';

/** One outbox entry: its payload is fixed when it is queued, as in REMS. */
export interface RemsDelivery {
  id: number;
  action: RemsAction;
  body: string;
  attempts: number;
  /** Status of each attempt; 'exception' for a time-out or a refused connection. */
  statuses: (number | 'exception')[];
}

export interface RemsTargets {
  add: string;
  remove: string;
}

/** REMS's socket and connection time-out of an entitlement POST. */
export const REMS_POST_TIMEOUT_MS = 2500;

export class FakeRems {
  private readonly rows: EntitlementRow[] = [];
  private readonly mails = new Map<string, string | null>();
  private nextId = 1;
  /** Deliveries not yet answered with 200, in the order they were queued. */
  readonly outbox: RemsDelivery[] = [];
  /** Every delivery that got its 200. */
  readonly delivered: RemsDelivery[] = [];

  constructor(
    private readonly targets: RemsTargets,
    /** REMS's `(time/now)`; tests move it to make ends fall in the past. */
    private readonly clock: () => number = Date.now,
  ) {}

  /** A REMS user and the email in its attributes (`users.userAttrs->>'email'`, may be null). */
  addUser(user: string, mail: string | null): void {
    this.mails.set(user, mail);
  }

  /**
   * An approved application entitles the user to the resources (REMS `grant-entitlements!`):
   * one new row each, with the application's `entitlement/end` if it has one.
   */
  grant(application: number, user: string, resources: string[], end: number | null = null) {
    return [...resources].sort().map((resource) => {
      this.rows.push({ application, user, resource, start: this.clock(), end });
      return this.queue('add', application, user, resource);
    });
  }

  /** Revoked, closed or member removed (REMS `revoke-entitlements!`): every row ends now. */
  revoke(application: number, user: string, resources: string[]) {
    const end = this.clock();
    return [...resources].sort().map((resource) => {
      for (const row of this.rowsOf(application, user, resource)) row.end = end;
      return this.queue('remove', application, user, resource);
    });
  }

  /** Attempts the given pending deliveries (all of them by default) once, in that order. */
  async deliver(deliveries: RemsDelivery[] = [...this.outbox]): Promise<(number | 'exception')[]> {
    const statuses: (number | 'exception')[] = [];
    for (const delivery of deliveries) {
      const status = await this.post(delivery);
      delivery.attempts++;
      delivery.statuses.push(status);
      statuses.push(status);
      if (status === 200) {
        this.outbox.splice(this.outbox.indexOf(delivery), 1);
        this.delivered.push(delivery);
      }
    }
    return statuses;
  }

  /** The rows a delivery carries, parsed back (for assertions). */
  static payload(delivery: RemsDelivery): Record<string, unknown>[] {
    return JSON.parse(delivery.body) as Record<string, unknown>[];
  }

  private rowsOf(application: number, user: string, resource: string): EntitlementRow[] {
    return this.rows
      .filter((r) => r.application === application && r.user === user && r.resource === resource)
      .sort((a, b) => a.start - b.start || (a.end ?? Infinity) - (b.end ?? Infinity));
  }

  private queue(
    action: RemsAction,
    application: number,
    user: string,
    resource: string,
  ): RemsDelivery {
    const payload = this.rowsOf(application, user, resource).map((row) => ({
      application: row.application,
      resource: row.resource,
      user: row.user,
      mail: this.mails.get(row.user) ?? null,
      end: row.end === null ? null : new Date(row.end).toISOString(),
    }));
    const delivery: RemsDelivery = {
      id: this.nextId++,
      action,
      body: JSON.stringify(payload),
      attempts: 0,
      statuses: [],
    };
    this.outbox.push(delivery);
    return delivery;
  }

  private async post(delivery: RemsDelivery): Promise<number | 'exception'> {
    try {
      const res = await fetch(this.targets[delivery.action], {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: delivery.body,
        signal: AbortSignal.timeout(REMS_POST_TIMEOUT_MS),
      });
      await res.arrayBuffer();
      return res.status;
    } catch {
      return 'exception';
    }
  }
}
