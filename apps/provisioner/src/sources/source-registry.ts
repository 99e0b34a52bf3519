import { DropzoneSource } from './dropzone/dropzone.source';
import { DssSource } from './dss/dss.source';
import { S3InboxSource } from './s3-inbox/s3-inbox.source';
import {
  DEFAULT_RANGED_READS,
  ReadAheadBudget,
  type RangedReadSettings,
} from './s3-inbox/ranged-read';
import type { S3Timeouts } from '../common/s3/signed-put';
import type { SourceConfig, SourceLimits } from '../config/source-config';
import { SourceSystem } from './source-system';

/** The configured sources by name; built once from the SOURCES setting. */
export class SourceRegistry {
  private readonly byName = new Map<string, SourceSystem>();

  /**
   * `s3Timeouts`: the S3_*_TIMEOUT_MS settings, which S3 inboxes share with S3 storage;
   * `rangedReads`: S3_INBOX_RANGE_*, with one read-ahead budget for all the inboxes.
   */
  constructor(
    configs: SourceConfig[],
    limits: SourceLimits,
    s3Timeouts?: S3Timeouts,
    rangedReads: RangedReadSettings = DEFAULT_RANGED_READS,
  ) {
    const reads = { settings: rangedReads, budget: ReadAheadBudget.of(rangedReads) };
    for (const config of configs) {
      this.byName.set(
        config.name,
        config.type === 'dropzone'
          ? new DropzoneSource(config, limits)
          : config.type === 's3'
            ? new S3InboxSource(config, limits, s3Timeouts, reads)
            : new DssSource(config, limits),
      );
    }
  }

  get(name: string): SourceSystem | null {
    return this.byName.get(name) ?? null;
  }

  all(): SourceSystem[] {
    return [...this.byName.values()];
  }
}
