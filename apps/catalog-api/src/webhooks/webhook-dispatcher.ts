import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { CatalogVersionTracker } from '../catalog-version/catalog-version-tracker';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import {
  DueMessage,
  WEBHOOK_SUBSCRIPTIONS_CHANNEL,
  WebhooksRepository,
} from './webhooks.repository';

/** Trail entries fanned out per subscription per round. */
const FAN_OUT_BATCH = 5000;
/** Messages in flight per process. */
const IN_FLIGHT = 64;

/** The body of a message: Standard Webhooks' `{type, timestamp, data}` (docs/events/). */
export function messageBody(message: DueMessage): string {
  return JSON.stringify({
    type: message.type,
    timestamp: message.at.toISOString(),
    data: {
      id: message.event_id,
      seq: Number(message.seq),
      actor: { kind: message.actor_kind, id: message.actor_id, name: message.actor_name },
      object: { type: message.object_type, id: message.object_id },
      change: message.change,
      hash: message.hash.toString('hex'),
      prev_hash: message.prev_hash.toString('hex'),
    },
  });
}

/**
 * Sends the outbox: copies new trail entries to each subscription's outbox, then POSTs due
 * messages, signed as Standard Webhooks (`webhook-id` is the event id, the same on every
 * retry), never more than IN_FLIGHT at once and never two of one subject at once. Runs beside
 * the request path: a grant only appends to the trail, whatever the receivers do.
 *
 * Without any subscription a round runs no query: whether one exists is kept, and forgotten
 * when one is made or ended on any replica (the `webhook_subscriptions` notification, heard on
 * the version tracker's connection) or when notifications may have been missed. While that
 * connection is down (or CATALOG_VERSION_LISTEN is off) each round asks, one small query.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WebhookDispatcher.name);
  private timer?: NodeJS.Timeout;
  private round?: Promise<void>;
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;
  /** Whether a subscription exists, while notifications vouch for it; null: ask. */
  private subscribed: boolean | null = null;
  /** Bumped by every notification: an answer asked for before one is not kept. */
  private epoch = 0;

  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: WebhooksRepository,
    private readonly tracker: CatalogVersionTracker,
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
  ) {
    // At construction: before any module's start-up hook starts the tracker's connection.
    if (settings.WEBHOOK_DELIVERY) {
      tracker.watch(WEBHOOK_SUBSCRIPTIONS_CHANNEL, () => {
        this.subscribed = null;
        this.epoch += 1;
      });
    }
  }

  onApplicationBootstrap(): void {
    if (!this.settings.WEBHOOK_DELIVERY) return;
    this.tracker.start();
    this.schedule();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.round;
    await Promise.all(this.inFlight);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.round = this.runRound()
        .catch((error: unknown) => this.logger.warn({ err: error }, 'webhook round failed'))
        .finally(() => this.schedule());
    }, this.settings.WEBHOOK_POLL_MS);
    this.timer.unref();
  }

  /** One pass: fan out, then take and send what is due, as far as the in-flight bound allows. */
  async runRound(): Promise<void> {
    if (!(await this.anySubscription())) return;
    await this.dataSource.transaction((m) => this.outbox.fanOut(m, FAN_OUT_BATCH));
    const room = IN_FLIGHT - this.inFlight.size;
    if (room <= 0) return;
    const leaseSeconds = Math.ceil(this.settings.WEBHOOK_TIMEOUT_MS / 1000) + 30;
    const due = await this.outbox.take(this.dataSource.manager, room, leaseSeconds);
    for (const message of due) {
      const sending = this.send(message).finally(() => this.inFlight.delete(sending));
      this.inFlight.add(sending);
    }
  }

  /** Kept while the listener is up; asked (and kept if nothing changed meanwhile) otherwise. */
  private async anySubscription(): Promise<boolean> {
    if (this.subscribed !== null && this.tracker.listening()) return this.subscribed;
    const epoch = this.epoch;
    const listening = this.tracker.listening();
    const any = await this.outbox.anySubscription(this.dataSource.manager);
    if (listening && epoch === this.epoch) this.subscribed = any;
    return any;
  }

  private async send(message: DueMessage): Promise<void> {
    const body = messageBody(message);
    let error: string | undefined;
    try {
      // Signed at sending: receivers refuse a timestamp more than minutes away from theirs.
      const now = new Date();
      const signature = new Webhook(message.secret).sign(message.event_id, now, body);
      const response = await fetch(message.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': message.event_id,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.settings.WEBHOOK_TIMEOUT_MS),
      });
      await response.body?.cancel();
      if (response.status < 200 || response.status >= 300) error = `HTTP ${response.status}`;
    } catch (thrown) {
      error = (thrown as Error).name === 'TimeoutError' ? 'timed out' : (thrown as Error).message;
    }
    const m = this.dataSource.manager;
    if (error === undefined) return this.outbox.delivered(m, message.id);
    const schedule = this.settings.webhookRetrySeconds;
    const retryIn = message.attempts < schedule.length ? schedule[message.attempts] : null;
    await this.outbox.failed(m, message.id, error, retryIn);
    if (retryIn === null) {
      this.logger.warn({ delivery: message.id, seq: message.seq, error }, 'webhook dead-lettered');
    }
  }
}
