import { SpanStatusCode, trace } from '@opentelemetry/api';

/**
 * The steps of a dataset import, in the order they run. Their names are the same in the
 * attempt's spans (`import <step>`), the step histogram's `step` label and the worker's log line.
 */
export const IMPORT_STEPS = [
  'resolve',
  'plan',
  'stage',
  'verify',
  'validate',
  'flush',
  'publish',
] as const;
export type ImportStep = (typeof IMPORT_STEPS)[number];

/** Where a step's time is counted besides the timeline: the worker's step histogram. */
export interface StepMeter {
  observeStep(step: ImportStep, seconds: number): void;
}

const tracer = trace.getTracer('provisioner-import');

/**
 * One import attempt's timeline, the one place an import's steps are timed: run() opens a span
 * under the active one (the queue job's, so the steps show in the import's trace), observes the
 * step's seconds on the meter, and adds its milliseconds to the line the worker logs once the
 * import is done (`import <id> steps (ms): ...`, which the benchmark reads).
 */
export class ImportTimeline {
  private readonly ms = new Map<ImportStep, number>();
  private readonly began = performance.now();

  constructor(private readonly meter?: StepMeter) {}

  /** Milliseconds since the timeline was made: the steps' wall time, with what ran between them. */
  elapsedMs(): number {
    return performance.now() - this.began;
  }

  run<T>(step: ImportStep, work: () => T | Promise<T>): Promise<T> {
    return tracer.startActiveSpan(
      `import ${step}`,
      { attributes: { 'provisioner.import.step': step } },
      async (span) => {
        const started = performance.now();
        try {
          return await work();
        } catch (error) {
          span.recordException(error as Error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
          throw error;
        } finally {
          const ms = performance.now() - started;
          this.ms.set(step, (this.ms.get(step) ?? 0) + ms);
          this.meter?.observeStep(step, ms / 1000);
          span.end();
        }
      },
    );
  }

  /** "resolve=3 plan=12 stage=3400 verify=1 flush=230 publish=4" (ms, the steps that ran). */
  toString(): string {
    return IMPORT_STEPS.filter((step) => this.ms.has(step))
      .map((step) => `${step}=${Math.round(this.ms.get(step)!)}`)
      .join(' ');
  }
}
