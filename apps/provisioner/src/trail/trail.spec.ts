import type { Queue } from 'bullmq';
import { Registry } from 'prom-client';
import type { ProvisionerSettings } from '../config/provisioner.settings';
import { TrailEmitter, type TrailFacts } from './trail-emitter';
import {
  derivedEventId,
  eventsInTrailJob,
  TRAIL_MAX_BACKOFF_MS,
  trailBackoffMs,
  TrailEvent,
  trailEventsJobId,
  trailEventsOf,
  TrailJobName,
} from './trail.queue';

/** What an emitter wrote: each `add` and `addBulk`, as the jobs they held. */
function recordingQueue() {
  const writes: { name: string; data: unknown; opts: { jobId?: string } }[][] = [];
  const queue = {
    add: (name: string, data: unknown, opts: { jobId?: string }) => {
      writes.push([{ name, data, opts }]);
      return Promise.resolve();
    },
    addBulk: (jobs: { name: string; data: unknown; opts: { jobId?: string } }[]) => {
      writes.push(jobs);
      return Promise.resolve();
    },
  } as unknown as Queue;
  const emitter = new TrailEmitter(queue, {
    catalogRegistration: {},
  } as unknown as ProvisionerSettings);
  return { emitter, writes };
}

const allow = (n: number): TrailFacts => ({
  type: 'drs_object.allow',
  object_id: `P~S~D~${n}`,
  subject: 'reader',
  dataset: 'ACC-1',
});

describe('the trail outbox', () => {
  it('emits nothing where no catalog is configured: the queue is never touched', async () => {
    const untouchable = new Proxy({} as Queue, {
      get: (_target, name) => {
        throw new Error(`queue.${String(name)} used`);
      },
    });
    const emitter = new TrailEmitter(untouchable, {
      catalogRegistration: null,
    } as ProvisionerSettings);
    expect(emitter.enabled).toBe(false);
    await expect(
      emitter.emit({ type: 'drs_object.allow', object_id: 'P~S~D', subject: 'someone' }),
    ).resolves.toBeUndefined();
  });

  it("times each emit's wait until its write ends, counted once the write has landed", async () => {
    let land!: () => void;
    const queue = {
      add: () => new Promise<void>((resolve) => (land = resolve)),
      addBulk: () => Promise.resolve(),
    } as unknown as Queue;
    const registry = new Registry();
    const emitter = new TrailEmitter(
      queue,
      { catalogRegistration: {} } as unknown as ProvisionerSettings,
      registry,
    );
    const count = async () =>
      Number(
        /^provisioner_trail_append_seconds_count (\d+)$/m.exec(
          await registry.getSingleMetricAsString('provisioner_trail_append_seconds'),
        )![1],
      );
    expect(await count()).toBe(0);
    let answered = false;
    const written = emitter.emit(allow(1)).then(() => (answered = true));
    await new Promise((resolve) => setImmediate(resolve));
    // The write is under way: nothing answered, nothing counted.
    expect(land).toBeDefined();
    expect(answered).toBe(false);
    expect(await count()).toBe(0);
    land();
    await written;
    expect(await count()).toBe(1);
  });

  it('derives one lowercase UUID per event, the same each time it is reached', () => {
    const id = derivedEventId('import.publish', 'dropzone-dataset-DS-1', '1700000000000');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(derivedEventId('import.publish', 'dropzone-dataset-DS-1', '1700000000000')).toBe(id);
    expect(derivedEventId('import.publish', 'dropzone-dataset-DS-1', '1700000000001')).not.toBe(id);
  });

  it('backs off exponentially from the retry delay, up to a bound, never giving up', () => {
    expect([1, 2, 3, 4].map((n) => trailBackoffMs(n, 1000))).toEqual([1000, 2000, 4000, 8000]);
    expect(trailBackoffMs(40, 1000)).toBe(TRAIL_MAX_BACKOFF_MS);
  });

  it('writes a bulk decision of 1,000 events as one job holding them in order', async () => {
    const { emitter, writes } = recordingQueue();
    const facts = Array.from({ length: 1000 }, (_x, n) => allow(n));
    await emitter.emit(facts);
    expect(writes).toHaveLength(1);
    expect(writes[0]).toHaveLength(1);
    const [job] = writes[0];
    expect(job.name).toBe(TrailJobName.ReportEvents);
    const events = trailEventsOf(job.data)!;
    expect(events.map((e) => e.object_id)).toEqual(facts.map((f) => f.object_id));
    expect(new Set(events.map((e) => e.id)).size).toBe(1000);
    expect(new Set(events.map((e) => e.occurred_at)).size).toBe(1);
    expect(job.opts.jobId).toBe(trailEventsJobId(events));
    expect(eventsInTrailJob(job.opts.jobId!)).toBe(1000);
  });

  it('writes one event as a job of its own, its id the event id (the shape earlier versions read)', async () => {
    const { emitter, writes } = recordingQueue();
    await emitter.emit([{ ...allow(1), id: 'e-1' }]);
    await emitter.emit(allow(2));
    expect(writes.map((w) => w.map((job) => job.name))).toEqual([
      [TrailJobName.Report],
      [TrailJobName.Report],
    ]);
    expect(writes[0][0]).toMatchObject({
      data: { id: 'e-1', object_id: 'P~S~D~1' },
      opts: { jobId: 'e-1' },
    });
    expect(trailEventsOf(writes[0][0].data)).toEqual([writes[0][0].data]);
  });

  it('emits of one turn share one addBulk, a job per emit, in the order emitted', async () => {
    const { emitter, writes } = recordingQueue();
    await Promise.all([emitter.emit([allow(1), allow(2)]), emitter.emit(allow(3))]);
    expect(writes).toHaveLength(1);
    expect(writes[0].map((job) => trailEventsOf(job.data)!.map((e) => e.object_id))).toEqual([
      ['P~S~D~1', 'P~S~D~2'],
      ['P~S~D~3'],
    ]);
  });

  it('cuts text to the catalog’s limits and leaves empty fields out', async () => {
    const { emitter, writes } = recordingQueue();
    await emitter.emit({
      id: 'e-long',
      type: 'drs_object.refuse',
      object_id: 'o'.repeat(300),
      subject: '',
      reason: 'r'.repeat(3000),
      bytes: 0,
    });
    expect(writes[0][0].data).toEqual({
      id: 'e-long',
      type: 'drs_object.refuse',
      occurred_at: expect.any(String),
      object_id: 'o'.repeat(255),
      reason: 'r'.repeat(2000),
      bytes: 0,
    });
  });

  it('gives a job of many events an id from their ids, in order, with their number', () => {
    const events = ['a', 'b', 'c'].map((id) => ({ id }) as TrailEvent);
    const id = trailEventsJobId(events);
    expect(id).toMatch(/^events-3-[0-9a-f]{32}$/);
    expect(trailEventsJobId(events.map((e) => ({ ...e })))).toBe(id);
    expect(trailEventsJobId([...events].reverse())).not.toBe(id);
    expect(eventsInTrailJob(id)).toBe(3);
    // An event's own id (a job of one event) counts one.
    expect(eventsInTrailJob('0190a2b4-7c1e-8d2f-9a3b-4c5d6e7f8a9b')).toBe(1);
    expect(trailEventsOf({ events })).toBe(events);
    expect(trailEventsOf({ type: 'x' })).toBeUndefined();
  });
});
