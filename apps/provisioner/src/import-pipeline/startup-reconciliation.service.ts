import { InjectQueue } from '@nestjs/bullmq';
import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import type { Queue } from 'bullmq';
import { Counter, Gauge, Registry } from 'prom-client';
import { logSafeMessage } from '@app/errors';
import { METRICS_REGISTRY } from '@app/platform';
import { IMPORTS_QUEUE } from '../imports/import.queue';
import { STORAGE_SYSTEM } from '../storage/storage.module';
import { StorageRefusedError, type StorageSystem } from '../storage/storage-system';
import { reconcileStorage } from './startup-reconciliation';

/** A reconciliation the storage or the queue failed is tried again this much later. */
const RETRY_MS = 60_000;

/**
 * Start-up reconciliation (startup-reconciliation.ts) in the background: the worker's health
 * port opens and its jobs run while it goes, however much storage holds, and its progress is on
 * /metrics. Running beside the jobs is safe for the same reason as beside other replicas: one
 * staging area per attempt, listed before any job state is read.
 */
@Injectable()
export class StartupReconciliationService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(StartupReconciliationService.name);
  private readonly running: Gauge;
  private readonly datasetsChecked: Gauge;
  private readonly withoutProvenance: Gauge;
  private readonly stagingRemoved: Counter;
  private readonly completedAt: Gauge;
  private readonly stopping = new AbortController();
  private retry: NodeJS.Timeout | undefined;
  private current: Promise<void> | null = null;

  constructor(
    @Inject(STORAGE_SYSTEM) private readonly storage: StorageSystem,
    @InjectQueue(IMPORTS_QUEUE) private readonly queue: Queue,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    const registers = [registry];
    this.running = new Gauge({
      name: 'provisioner_reconciliation_running',
      help: 'Start-up reconciliation of storage under way (1) or not (0)',
      registers,
    });
    this.datasetsChecked = new Gauge({
      name: 'provisioner_reconciliation_datasets_checked',
      help: 'Published datasets the current (or last) reconciliation has checked for provenance',
      registers,
    });
    this.withoutProvenance = new Gauge({
      name: 'provisioner_reconciliation_datasets_without_provenance',
      help: 'Published datasets without provenance found by the current (or last) reconciliation',
      registers,
    });
    this.stagingRemoved = new Counter({
      name: 'provisioner_reconciliation_staging_removed_total',
      help: 'Staging areas of imports that will not run again, removed by reconciliation',
      registers,
    });
    this.completedAt = new Gauge({
      name: 'provisioner_reconciliation_completed_timestamp_seconds',
      help: 'When the last reconciliation completed (0: none has yet)',
      registers,
    });
  }

  onApplicationBootstrap(): void {
    this.start();
  }

  /** Waits for a reconciliation under way to notice the stop (between two collections). */
  async onApplicationShutdown(): Promise<void> {
    this.stopping.abort();
    clearTimeout(this.retry);
    await this.current;
  }

  private start(): void {
    this.current = this.reconcile().finally(() => {
      this.current = null;
    });
  }

  /**
   * A store that refuses the worker (credential, bucket) is not retried: readiness says why, and
   * the next start reconciles. Anything else (the store or the queue down) is tried again.
   */
  private async reconcile(): Promise<void> {
    this.running.set(1);
    this.datasetsChecked.set(0);
    this.withoutProvenance.set(0);
    try {
      const report = await reconcileStorage(this.storage, this.queue, {
        stagingRemoved: () => this.stagingRemoved.inc(),
        datasetsChecked: (count, missing) => {
          this.datasetsChecked.inc(count);
          this.withoutProvenance.inc(missing);
        },
        signal: this.stopping.signal,
      });
      if (this.stopping.signal.aborted) return;
      this.completedAt.set(Date.now() / 1000);
      if (report.stagingRemoved.length)
        this.logger.log(
          `removed staging of imports that will not run again: ${report.stagingRemoved.join(', ')}`,
        );
      for (const path of report.withoutProvenance)
        this.logger.warn(`published dataset without provenance (left untouched): ${path}`);
    } catch (error) {
      if (this.stopping.signal.aborted) return;
      if (error instanceof StorageRefusedError) {
        this.logger.error(`start-up reconciliation skipped: ${error.message}`);
        return;
      }
      this.logger.error(
        `start-up reconciliation failed, tried again in ${RETRY_MS / 1000} s: ${logSafeMessage(error)}`,
      );
      this.retry = setTimeout(() => this.start(), RETRY_MS);
      this.retry.unref();
    } finally {
      this.running.set(0);
    }
  }
}
