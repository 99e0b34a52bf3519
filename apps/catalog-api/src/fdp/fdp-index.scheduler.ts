import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { FdpIndexClient } from './fdp-index.client';

/** The index marks an FDP inactive after a week without a ping: the reference FDP pings every 7 days. */
export const PING_INTERVAL_MS = 7 * 24 * 3600 * 1000;
/** The first ping, a moment after start (the reference FDP's `ping.initDelay`): the index reads the root at once. */
export const FIRST_PING_MS = 10_000;
/** A failed ping is tried again after 1 minute, doubling up to 6 hours. */
export const RETRY_FIRST_MS = 60_000;
export const RETRY_MAX_MS = 6 * 3600 * 1000;

/** Sets a timer; returns its cancel. Replaced in the unit test, which fires timers itself. */
export type SetTimer = (run: () => void, ms: number) => () => void;

const realTimer: SetTimer = (run, ms) => {
  const t = setTimeout(run, ms);
  // A pending ping never keeps the process alive.
  t.unref();
  return () => clearTimeout(t);
};

/**
 * Pings every FAIR Data Point index in FDP_INDEX_URL with the FDP's root (`<CATALOG_SOURCE>/fdp`)
 * at start and then weekly. A ping that fails (no answer, 429, 5xx) is tried again with backoff
 * (the index's Retry-After when it gives one) until it is accepted or the next weekly ping is
 * due; a refused one (400) is logged and waits for the next week. Nothing here stops the app.
 */
@Injectable()
export class FdpIndexScheduler implements OnApplicationShutdown {
  private readonly logger = new Logger(FdpIndexScheduler.name);
  private readonly cancels = new Map<string, () => void>();
  private stopped = false;
  setTimer: SetTimer = realTimer;

  constructor(
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
    private readonly client: FdpIndexClient,
  ) {}

  /** Starts pinging (the HTTP app; never the CLI). */
  start(): void {
    for (const index of this.settings.fdpIndexUrls)
      this.later(index, FIRST_PING_MS, () => this.round(index));
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    for (const cancel of this.cancels.values()) cancel();
    this.cancels.clear();
  }

  private later(index: string, ms: number, run: () => Promise<void>) {
    if (this.stopped) return;
    this.cancels.set(
      index,
      this.setTimer(() => void run(), ms),
    );
  }

  /** One weekly round: ping, retry while it fails, and set the next round a week after this one began. */
  private async round(index: string, attempt = 0, began = Date.now()): Promise<void> {
    const clientUrl = `${this.settings.source}/fdp`;
    const outcome = await this.client.ping(index, clientUrl);
    const nextRound = Math.max(0, began + PING_INTERVAL_MS - Date.now());
    if (outcome.kind === 'accepted') {
      this.logger.log({ index, clientUrl }, 'FAIR Data Point index ping accepted');
      this.later(index, nextRound, () => this.round(index));
      return;
    }
    if (outcome.kind === 'refused') {
      this.logger.error(
        { index, clientUrl, status: outcome.status, reason: outcome.message },
        'FAIR Data Point index refused the ping; next ping in a week',
      );
      this.later(index, nextRound, () => this.round(index));
      return;
    }
    const backoff = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** attempt);
    const wait = Math.min(Math.max(outcome.retryAfterMs ?? 0, backoff), nextRound);
    this.logger.warn(
      { index, clientUrl, status: outcome.status, reason: outcome.message, retryInMs: wait },
      'FAIR Data Point index ping failed; trying again',
    );
    if (wait >= nextRound) this.later(index, nextRound, () => this.round(index));
    else this.later(index, wait, () => this.round(index, attempt + 1, began));
  }
}
