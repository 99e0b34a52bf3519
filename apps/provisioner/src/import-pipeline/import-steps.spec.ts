import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { node, tracing } from '@opentelemetry/sdk-node';
import { ImportTimeline } from './import-steps';

/** The id of a finished span's parent (the SDK's ReadableSpan). */
const parentOf = (span: tracing.ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

describe('ImportTimeline: the one timing of an import step (span, histogram, log line)', () => {
  const exporter = new tracing.InMemorySpanExporter();
  const provider = new node.NodeTracerProvider({
    spanProcessors: [new tracing.SimpleSpanProcessor(exporter)],
  });
  beforeAll(() => provider.register());
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
  });
  beforeEach(() => exporter.reset());

  /** Runs `work` under a span standing for the queue job's, and returns that span's context. */
  async function underJob(work: () => Promise<void>) {
    const job = trace.getTracer('test').startSpan('process imports');
    await context.with(trace.setSpan(context.active(), job), work);
    job.end();
    return job.spanContext();
  }

  it("gives each step a span under the job's, observes its seconds under the same name, and logs the steps in order", async () => {
    const observed: [string, number][] = [];
    const timeline = new ImportTimeline({ observeStep: (step, s) => observed.push([step, s]) });
    let results: unknown[] = [];
    const job = await underJob(async () => {
      results = [
        await timeline.run('plan', async () => 'planned'),
        await timeline.run('resolve', () => 'resolved'),
        await timeline.run('plan', async () => 'planned again'),
      ];
    });
    expect(results).toEqual(['planned', 'resolved', 'planned again']);
    const spans = exporter.getFinishedSpans().filter((s) => s.name !== 'process imports');
    expect(spans.map((s) => [s.name, s.attributes['provisioner.import.step']])).toEqual([
      ['import plan', 'plan'],
      ['import resolve', 'resolve'],
      ['import plan', 'plan'],
    ]);
    for (const span of spans) {
      expect(span.spanContext().traceId).toBe(job.traceId);
      expect(parentOf(span)).toBe(job.spanId);
    }
    expect(observed.map(([step]) => step)).toEqual(['plan', 'resolve', 'plan']);
    // The log line: the steps in the pipeline's order, a step run twice counted once, summed.
    const ms = (step: string) =>
      Math.round(observed.filter(([s]) => s === step).reduce((n, [, s]) => n + s * 1000, 0));
    expect(timeline.toString()).toBe(`resolve=${ms('resolve')} plan=${ms('plan')}`);
  });

  it('marks the span of a failed step, counts its time all the same, and hands the error on', async () => {
    const observed: string[] = [];
    const timeline = new ImportTimeline({ observeStep: (step) => observed.push(step) });
    const failure = new Error('no space left');
    await underJob(async () => {
      await expect(
        timeline.run('stage', async () => {
          throw failure;
        }),
      ).rejects.toBe(failure);
    });
    const [stage] = exporter.getFinishedSpans().filter((s) => s.name === 'import stage');
    expect(stage.status).toEqual({ code: SpanStatusCode.ERROR, message: 'no space left' });
    expect(stage.events.map((e) => e.name)).toEqual(['exception']);
    expect(observed).toEqual(['stage']);
    expect(timeline.toString()).toMatch(/^stage=\d+$/);
  });
});
