import { mkdir, statfs } from 'node:fs/promises';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Gauge, Registry } from 'prom-client';
import { METRICS_REGISTRY } from '@app/platform';
import { logSafeMessage } from '@app/errors';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';

/**
 * Free and total space of filesystem storage (statfs of STORAGE_ROOT at scrape time: the bytes
 * an unprivileged writer may still use, as `df` shows them), so an alert fires before imports
 * are refused for want of space. An S3 store reports no capacity through its API, so with
 * STORAGE_BACKEND=s3 the gauges are absent: watch the store's own metrics (Ceph RGW quotas,
 * MinIO's capacity metrics). Every provisioner pod mounting the volume reports the same numbers:
 * aggregate with max().
 */
@Injectable()
export class StorageMetricsCollector {
  private readonly logger = new Logger(StorageMetricsCollector.name);

  constructor(
    @Inject(METRICS_REGISTRY) registry: Registry,
    @Inject(PROVISIONER_SETTINGS) settings: ProvisionerSettings,
  ) {
    if (settings.STORAGE_BACKEND !== 'filesystem') return;
    const root = settings.STORAGE_ROOT;
    // The root is made on first use, as the storage itself does; a failed read leaves the
    // gauges without a sample (the `root` label), never a false 0.
    const space = () =>
      mkdir(root, { recursive: true })
        .then(() => statfs(root))
        .then(
          (stats) => ({ free: stats.bavail * stats.bsize, size: stats.blocks * stats.bsize }),
          (error: unknown) => {
            this.logger.warn(`storage space unavailable: ${logSafeMessage(error)}`);
            return null;
          },
        );
    new Gauge({
      name: 'provisioner_storage_free_bytes',
      help: 'Bytes of filesystem storage still free for imports (statfs of STORAGE_ROOT)',
      labelNames: ['root'],
      registers: [registry],
      async collect() {
        this.reset();
        const now = await space();
        if (now) this.set({ root }, now.free);
      },
    });
    new Gauge({
      name: 'provisioner_storage_size_bytes',
      help: 'Size of the filesystem holding STORAGE_ROOT, in bytes',
      labelNames: ['root'],
      registers: [registry],
      async collect() {
        this.reset();
        const now = await space();
        if (now) this.set({ root }, now.size);
      },
    });
  }
}
