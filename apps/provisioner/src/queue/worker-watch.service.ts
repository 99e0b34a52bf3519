import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import type { Job, Worker } from 'bullmq';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { isDependencyUnavailable, logSafeMessage } from '@app/errors';
import { HealthCheck, METRICS_REGISTRY } from '@app/platform';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';
import type { QueueBackendConfig } from './queue-backend';
import { QUEUE_BACKEND } from './queue.module';
import { sentinelDownAfterMs } from './redis-topology';

/** A failover takes the Sentinels' down-after time plus an election of a few seconds. */
const ELECTION_MS = 5000;

/** How often a stopped run loop is noticed and started again. */
const LOOP_CHECK_MS = 2000;

/** A client of the Redis backend: its ioredis status and events. */
interface StatusClient {
  status: string;
  on(event: 'close' | 'ready', listener: () => void): unknown;
}

/** The Redis backend's connections (not part of BullMQ's backend-neutral interface). */
interface RedisConnections {
  client: Promise<StatusClient>;
  blockingClient: Promise<StatusClient> | undefined;
}

interface Watched {
  worker: Worker;
  connected: boolean;
  downSince: number | null;
  lastError: string | null;
  /** When the connection came back, until the next job is taken. */
  reconnectedAt: number | null;
  loopStopped: string | null;
}

/**
 * Watches the worker process's BullMQ workers across Redis outages and failovers: a worker
 * must take jobs again by itself once its Redis is back (BullMQ users have seen workers stay
 * silently idle after a Sentinel failover), and an operator must see what happened meanwhile.
 * Per queue: whether the connection is up, each loss, how long the last one lasted, the time
 * from its return to the next job taken, and the run loop, started again if it ever ends
 * while the process is not shutting down. Readiness is down while a watched worker is cut off
 * or its loop has stopped.
 */
@Injectable()
export class WorkerWatchService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('QueueWorker');
  private readonly watched = new Map<string, Watched>();
  private readonly timer: NodeJS.Timeout;
  private readonly connected: Gauge;
  private readonly disconnects: Counter;
  private readonly lastOutage: Gauge;
  private readonly outages: Histogram;
  private readonly resume: Gauge;
  private readonly restarts: Counter;
  private readonly lastTaken: Gauge;

  constructor(
    @Inject(METRICS_REGISTRY) registry: Registry,
    @Inject(QUEUE_BACKEND) private readonly backend: QueueBackendConfig,
    @Inject(PROVISIONER_SETTINGS) private readonly settings: ProvisionerSettings,
  ) {
    const labelNames = ['queue'];
    const registers = [registry];
    this.connected = new Gauge({
      name: 'provisioner_queue_worker_connected',
      help: "1 while this worker's queue connection is up, 0 while it is lost",
      labelNames,
      registers,
    });
    this.disconnects = new Counter({
      name: 'provisioner_queue_worker_disconnects_total',
      help: 'Times this worker lost its queue connection (a Redis restart, failover or outage)',
      labelNames,
      registers,
    });
    this.lastOutage = new Gauge({
      name: 'provisioner_queue_worker_last_outage_seconds',
      help: 'How long the last loss of the queue connection lasted',
      labelNames,
      registers,
    });
    // Every outage's length, not only the last: a long outage is often followed by a short
    // reconnect (the restarted nodes settling their roles), which replaces the gauge above.
    this.outages = new Histogram({
      name: 'provisioner_queue_worker_outage_seconds',
      help: 'How long each loss of the queue connection lasted',
      labelNames,
      buckets: [1, 5, 10, 30, 60, 300, 900],
      registers,
    });
    this.resume = new Gauge({
      name: 'provisioner_queue_worker_resume_seconds',
      help: 'Time from the queue connection coming back to the next job this worker took',
      labelNames,
      registers,
    });
    this.restarts = new Counter({
      name: 'provisioner_queue_worker_restarts_total',
      help: "Times this worker's run loop had stopped and was started again",
      labelNames,
      registers,
    });
    this.lastTaken = new Gauge({
      name: 'provisioner_queue_worker_last_job_taken_timestamp_seconds',
      help: 'When this worker last took a job (Unix time)',
      labelNames,
      registers,
    });
    this.timer = setInterval(() => this.restartStoppedLoops(), LOOP_CHECK_MS);
    this.timer.unref();
  }

  /**
   * On a Sentinel set, says at start when the import lock would lapse during a failover (the
   * running imports would then start again from the beginning); never delays the start.
   */
  onApplicationBootstrap(): void {
    if (this.backend.kind !== 'redis') return;
    void sentinelDownAfterMs(this.backend.redis).then((downAfter) => {
      const lockMs = this.settings.IMPORT_LOCK_MS;
      if (downAfter !== null && lockMs < downAfter + ELECTION_MS)
        this.logger.warn(
          `IMPORT_LOCK_MS (${lockMs}) does not outlast a failover (the Sentinels' ` +
            `down-after-milliseconds ${downAfter} plus an election): running imports would ` +
            `start again after one; set IMPORT_LOCK_MS to ${downAfter + 2 * ELECTION_MS} or more`,
        );
    });
  }

  /** Called once `worker.run()` has been started (the processor decides when). */
  watch(worker: Worker): void {
    const queue = worker.name;
    const state: Watched = {
      worker,
      connected: true,
      downSince: null,
      lastError: null,
      reconnectedAt: null,
      loopStopped: null,
    };
    this.watched.set(queue, state);
    this.connected.set({ queue }, 1);
    const lost = (reason: string) => {
      state.lastError = reason;
      if (!state.connected || worker.closing) return;
      state.connected = false;
      state.downSince = Date.now();
      state.reconnectedAt = null;
      this.connected.set({ queue }, 0);
      this.disconnects.inc({ queue });
      this.logger.warn(`queue ${queue}: connection lost (${reason}); waiting for it to come back`);
    };
    const back = () => {
      if (state.connected || worker.closing) return;
      const away = (Date.now() - state.downSince!) / 1000;
      state.connected = true;
      state.downSince = null;
      state.reconnectedAt = Date.now();
      this.connected.set({ queue }, 1);
      this.lastOutage.set({ queue }, away);
      this.outages.observe({ queue }, away);
      this.logger.log(`queue ${queue}: connection back after ${away.toFixed(1)} s`);
    };
    // Only the errors of an unreachable Redis: a lost lock or a job's own error is no outage.
    worker.on('error', (error: Error) => {
      if (isDependencyUnavailable(error)) state.lastError = logSafeMessage(error);
    });
    // On Redis, the worker's two connections themselves (commands, and the blocking read of the
    // next job): up while both are ready. Another backend tells of its connection by events.
    const backend = worker.getBackend() as unknown as Partial<RedisConnections> & {
      on(event: 'ready' | 'close', listener: () => void): void;
    };
    if (backend.client === undefined) {
      backend.on('close', () => lost('connection closed'));
      backend.on('ready', back);
    } else {
      void Promise.all([backend.client, backend.blockingClient].filter((c) => c !== undefined))
        .then((clients) => {
          const check = (reason: string) =>
            clients.every((client) => client.status === 'ready') ? back() : lost(reason);
          for (const client of clients) {
            client.on('close', () => check(state.lastError ?? 'connection closed'));
            client.on('ready', () => check('connection closed'));
          }
        })
        .catch(() => undefined);
    }
    worker.on('active', (job: Job) => {
      const now = Date.now();
      this.lastTaken.set({ queue }, now / 1000);
      if (state.reconnectedAt === null) return;
      const resumed = (now - state.reconnectedAt) / 1000;
      state.reconnectedAt = null;
      this.resume.set({ queue }, resumed);
      this.logger.log(
        `queue ${queue}: took job ${job.id} ${resumed.toFixed(1)} s after the connection came back`,
      );
    });
  }

  /** Readiness of the worker process: every watched worker connected and running. */
  healthCheck(): HealthCheck {
    return {
      name: 'workers',
      check: () => {
        const problems = [...this.watched.entries()].flatMap(([queue, w]) => [
          // Closed at shutdown, or by anything else: it takes no job either way.
          ...(w.worker.closing ? [`${queue}: closed`] : []),
          ...(w.loopStopped ? [`${queue}: run loop stopped (${w.loopStopped}), restarting`] : []),
          ...(!w.connected
            ? [
                `${queue}: connection lost ${((Date.now() - w.downSince!) / 1000).toFixed(0)} s ago (${w.lastError})`,
              ]
            : []),
        ]);
        return problems.length === 0
          ? Promise.resolve()
          : Promise.reject(new Error(problems.join('; ')));
      },
    };
  }

  /**
   * BullMQ's run loop ends only on close, or on an error it does not handle: then the worker
   * would stay idle with jobs waiting. Start it again, as a restarted process would.
   */
  private restartStoppedLoops(): void {
    for (const [queue, w] of this.watched) {
      if (w.worker.closing || w.worker.isRunning()) continue;
      w.loopStopped ??= 'ended without a close';
      this.restarts.inc({ queue });
      this.logger.error(`queue ${queue}: run loop stopped; starting it again`);
      w.worker
        .run()
        .then(() => undefined)
        .catch((error: unknown) => {
          w.loopStopped = logSafeMessage(error);
        });
      if (w.worker.isRunning()) w.loopStopped = null;
    }
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }
}
