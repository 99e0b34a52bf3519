import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Client, Notification } from 'pg';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { CATALOG_VERSION_CHANNEL, CatalogVersionRepository } from './catalog-version.repository';

/** How often the listening connection is asked the version anyway: the bound on staleness when its socket dies silently. */
const HEARTBEAT_MS = 5_000;
const QUERY_TIMEOUT_MS = 2_000;
const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 10_000;

const later = (a: string, b: string): string => (BigInt(a) >= BigInt(b) ? a : b);

/**
 * Knows the catalog data version without asking Postgres on every request. A dedicated
 * connection to the database itself (DATABASE_DIRECT_URL behind a pooler, which cannot LISTEN)
 * LISTENs on `catalog_version` (the bump trigger NOTIFYs at commit), and the
 * version is only vouched for while that connection is up and no write through this replica
 * is in flight:
 * - writes through this replica: `writeStarted()`/`writeEnded()` around every mutating request;
 *   after one ends, the version is re-read before it is trusted again, so a client never reads
 *   older data from this replica after one of its writes was answered;
 * - writes elsewhere (other replicas, the CLI, schedulers): seen when their notification
 *   arrives, a few milliseconds after commit;
 * - connection lost, or the heartbeat query failing: nothing is vouched for (callers ask
 *   Postgres per request, as before) until it is back and the version re-read.
 * `known()` returning null is always safe: it only costs a query.
 */
@Injectable()
export class CatalogVersionTracker implements OnApplicationShutdown {
  private readonly logger = new Logger(CatalogVersionTracker.name);
  private client: Client | null = null;
  private version: string | null = null;
  private heard = '0';
  private writesInFlight = 0;
  /** Bumped by every invalidation: a version read that started before one is not trusted. */
  private epoch = 0;
  private started = false;
  private stopped = false;
  private retryMs = RECONNECT_MIN_MS;
  private timer: NodeJS.Timeout | null = null;
  /** Other channels heard on the same connection, and what each notification invalidates. */
  private readonly watched = new Map<string, () => void>();

  constructor(
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
    private readonly versions: CatalogVersionRepository,
  ) {}

  /** Starts listening in the background (the HTTP app only; the CLI never needs it). */
  start(): void {
    if (this.started || !this.settings.CATALOG_VERSION_LISTEN) return;
    this.started = true;
    void this.connect();
  }

  /**
   * Hears `channel` on the listening connection (one connection per replica, whatever listens):
   * `onChange` runs on each of its notifications, and whenever some may have been missed (the
   * connection lost, or up again). Call before `start`.
   */
  watch(channel: string, onChange: () => void): void {
    if (this.started)
      throw new Error(`${channel} is watched too late: the tracker listens already`);
    this.watched.set(channel, onChange);
  }

  /** Whether notifications arrive now: a cache invalidated by them may be trusted meanwhile. */
  listening(): boolean {
    return this.client !== null;
  }

  /** The current version if this replica can vouch for it right now, else null. */
  known(): string | null {
    return this.writesInFlight === 0 ? this.version : null;
  }

  writeStarted(): void {
    this.writesInFlight += 1;
    this.invalidate();
  }

  writeEnded(): void {
    this.writesInFlight -= 1;
    this.invalidate();
    if (this.writesInFlight === 0) void this.refresh();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = null;
    this.invalidate();
    await client?.end().catch(() => undefined);
  }

  private invalidate(): void {
    this.version = null;
    this.epoch += 1;
  }

  /** The watched channels' notifications may have been missed: their caches are unknown. */
  private watchedUnknown(): void {
    for (const onChange of this.watched.values()) onChange();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new Client({
      connectionString: this.settings.sessionDatabaseUrl,
      application_name: 'catalog-api version listener',
      connectionTimeoutMillis: QUERY_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      keepAlive: true,
    });
    let lost = false;
    const onLost = (error?: Error): void => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = null;
      this.invalidate();
      this.watchedUnknown();
      client.end().catch(() => undefined);
      if (this.stopped) return;
      this.logger.warn(
        `catalog version listener disconnected${error ? `: ${error.message}` : ''}; reads ask the database until it is back`,
      );
      this.schedule(() => this.connect(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (message: Notification) => this.onNotification(message));
    try {
      await client.connect();
      await this.versions.listen(client);
      for (const channel of this.watched.keys()) await this.versions.listenOn(client, channel);
    } catch (error) {
      onLost(error as Error);
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.retryMs = RECONNECT_MIN_MS;
    // Up again: what the watched channels said while it was down is unknown.
    this.watchedUnknown();
    // LISTEN first, then read: a commit in between is either in the read or notified after it.
    await this.refresh();
    this.scheduleHeartbeat(client);
  }

  private onNotification(message: Notification): void {
    const watched = this.watched.get(message.channel);
    if (watched !== undefined) return watched();
    if (message.channel !== CATALOG_VERSION_CHANNEL || !/^\d+$/.test(message.payload ?? '')) return;
    // Heard, not read: never a reason to vouch again after an invalidation.
    this.learn(message.payload!);
  }

  /**
   * Takes note of a committed version. It becomes the vouched-for version again only when it
   * was read after the latest invalidation (`readInEpoch` is the epoch the read started in),
   * the listener is up and no write through this replica is in flight.
   */
  private learn(version: string, readInEpoch?: number): void {
    this.heard = later(this.heard, version);
    if (this.version !== null) this.version = later(this.version, this.heard);
    else if (readInEpoch === this.epoch && this.client !== null && this.writesInFlight === 0)
      this.version = this.heard;
  }

  /** Reads the version and trusts it only if nothing invalidated it meanwhile. */
  private async refresh(): Promise<void> {
    const epoch = this.epoch;
    let read: string;
    try {
      read = await this.versions.current();
    } catch {
      // The listener's heartbeat (or its reconnection) tries again.
      return;
    }
    this.learn(read, epoch);
  }

  /** Proves the listening connection alive and catches anything a notification missed. */
  private async heartbeat(client: Client): Promise<void> {
    if (this.client !== client) return;
    try {
      const epoch = this.epoch;
      this.learn(await this.versions.currentOn(client), epoch);
    } catch (error) {
      client.emit('error', error);
      return;
    }
    this.scheduleHeartbeat(client);
  }

  /**
   * The next heartbeat, unless `client` was lost while this step awaited (its read can succeed
   * just before the connection's end is seen): the reconnection scheduled then holds the one
   * timer, and replacing it with a heartbeat that finds no client would never reconnect.
   */
  private scheduleHeartbeat(client: Client): void {
    if (this.client === client) this.schedule(() => this.heartbeat(client), HEARTBEAT_MS);
  }

  private schedule(task: () => Promise<void>, ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void task(), ms);
    this.timer.unref();
  }
}
