import { Inject, Injectable } from '@nestjs/common';
import { Counter, Histogram, Registry } from 'prom-client';
import { METRICS_REGISTRY } from '@app/platform';

/** How an import ended (the metrics' `outcome` label values): published, failed for good after its retries, or refused as bad input. */
export const IMPORT_OUTCOMES = ['imported', 'failed', 'rejected'] as const;
export type ImportOutcome = (typeof IMPORT_OUTCOMES)[number];

/**
 * The imports' own metrics. The import pipeline calls these; the numbers appear on the
 * worker's /metrics (the process that runs the copies).
 */
@Injectable()
export class ImportMetrics {
  private readonly imports: Counter<'outcome'>;
  private readonly duration: Histogram<'outcome'>;
  private readonly steps: Histogram<'step'>;
  private readonly bytes: Counter;
  private readonly files: Counter;

  constructor(@Inject(METRICS_REGISTRY) registry: Registry) {
    this.imports = new Counter({
      name: 'provisioner_imports_total',
      help: 'Imports that ended, by outcome (imported, failed, rejected)',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'provisioner_import_duration_seconds',
      help: 'Duration of an import from start to its outcome, by outcome',
      labelNames: ['outcome'],
      // Seconds to hours: copies of large datasets take long.
      buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600],
      registers: [registry],
    });
    this.steps = new Histogram({
      name: 'provisioner_import_step_seconds',
      help: "Duration of each step of an import's attempts (resolve, plan, stage, verify, validate, flush, publish), by step",
      labelNames: ['step'],
      // Milliseconds (a resolve, a verify) to hours (the stage step of a large dataset).
      buckets: [0.01, 0.05, 0.25, 1, 5, 15, 60, 300, 900, 3600, 10800],
      registers: [registry],
    });
    this.bytes = new Counter({
      name: 'provisioner_import_bytes_total',
      help: 'Bytes copied into storage by imports',
      registers: [registry],
    });
    this.files = new Counter({
      name: 'provisioner_import_files_total',
      help: 'Files copied into storage by imports',
      registers: [registry],
    });
    // Present at zero from the start, so rate() and alerts work before the first import.
    for (const outcome of IMPORT_OUTCOMES) this.imports.inc({ outcome }, 0);
  }

  /** Once per import that ended (not per attempt that will be retried). */
  recordImport(outcome: ImportOutcome, durationSeconds: number): void {
    this.imports.inc({ outcome });
    this.duration.observe({ outcome }, Math.max(0, durationSeconds));
  }

  /** Each step of an attempt as it ends, failed or not (ImportTimeline: its step names). */
  observeStep(step: string, seconds: number): void {
    this.steps.observe({ step }, Math.max(0, seconds));
  }

  /** Call as bytes are copied (per chunk or per file): the counter then shows throughput live. */
  addBytes(n: number): void {
    if (n > 0) this.bytes.inc(n);
  }

  addFiles(n: number): void {
    if (n > 0) this.files.inc(n);
  }
}
