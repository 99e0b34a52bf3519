import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { getQueueToken } from '@nestjs/bullmq';
import { Logger } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Queue } from 'bullmq';
import { generateApiKey } from '@app/auth';
import { startPrivateRedis, type PrivateRedis } from '../../../scripts/lib/private-redis';
import {
  provisionerTestSettings,
  queueEnv,
  type QueueBackendChoice,
} from '../../../test/support/provisioner-app';
import { testServices } from '../../../test/support/test-services';
import { until } from '../../../test/support/wait';
import { createProvisionerApiApp } from '../src/http-app';
import { TrailEmitter } from '../src/trail/trail-emitter';
import { TRAIL_QUEUE, type TrailEvent } from '../src/trail/trail.queue';
import { tempDir } from './support/dropzone-fixture';

const backends: QueueBackendChoice[] = testServices().redisUrl
  ? ['redis', 'postgres']
  : ['postgres'];

/** The API's settings with the trail on (no worker runs: what is queued stays waiting). */
const trailOn = (env: Record<string, string>) =>
  provisionerTestSettings({
    ...env,
    // Never called: nothing here delivers.
    CATALOG_URL: 'http://127.0.0.1:9',
    CATALOG_API_KEY: generateApiKey(48),
  });

const event = (n: number) => ({
  id: randomUUID(),
  type: 'drs_object.allow' as const,
  object_id: `P~S~DS-${n % 4}`,
  subject: `reader-${n % 3}`,
});

/**
 * The trail's group commit (docs/decisions/provisioner-trail-group-commit.md): the emits of
 * one turn of the event loop are written in one `addBulk`, those made while it is under way in
 * the next one, each emit resolving once its events are in the queue, in the order emitted.
 * Real queues on both backends; the queue's methods are watched, not replaced (on the class:
 * each module registering the queue has an instance of its own).
 */
describe.each(backends)('trail events emitted at once share one write (%s backend)', (backend) => {
  let app: NestExpressApplication;
  let queue: Queue;
  let emitter: TrailEmitter;

  beforeAll(async () => {
    app = await createProvisionerApiApp(trailOn(await queueEnv(backend)));
    await app.init();
    queue = app.get<Queue>(getQueueToken(TRAIL_QUEUE));
    emitter = app.get(TrailEmitter);
  }, 60_000);

  afterAll(async () => {
    jest.restoreAllMocks();
    await app?.close();
  });

  /** The waiting jobs' ids in the order a worker would take them. */
  const waitingIds = async () => (await queue.getWaiting(0, -1)).map((job) => job.id);

  it('many emits at once: one addBulk, every emit resolved after it, the order kept', async () => {
    await queue.drain();
    const bulk = jest.spyOn(Queue.prototype, 'addBulk');
    const single = jest.spyOn(Queue.prototype, 'add');
    const events = Array.from({ length: 40 }, (_x, n) => event(n));
    let resolved = 0;
    await Promise.all(events.map((e) => emitter.emit(e).then(() => (resolved += 1))));
    expect(resolved).toBe(40);
    expect(single).not.toHaveBeenCalled();
    expect(bulk).toHaveBeenCalledTimes(1);
    expect(bulk.mock.calls[0][0].map((job) => (job.data as TrailEvent).id)).toEqual(
      events.map((e) => e.id),
    );
    expect(await waitingIds()).toEqual(events.map((e) => e.id));
    bulk.mockRestore();
    single.mockRestore();
  });

  it('emits made while a write is under way go together in the next, after it', async () => {
    await queue.drain();
    const bulk = jest.spyOn(Queue.prototype, 'addBulk');
    const first = Array.from({ length: 5 }, (_x, n) => event(n));
    const second = Array.from({ length: 7 }, (_x, n) => event(n));
    const firstWritten = Promise.all(first.map((e) => emitter.emit(e)));
    // The write starts after this turn's callbacks: once past it, the first write is under way.
    await new Promise((resolve) => setImmediate(resolve));
    expect(bulk).toHaveBeenCalledTimes(1);
    const secondWritten = Promise.all(second.map((e) => emitter.emit(e)));
    await firstWritten;
    await secondWritten;
    expect(bulk).toHaveBeenCalledTimes(2);
    expect(
      bulk.mock.calls.map((call) => call[0].map((job) => (job.data as TrailEvent).id)),
    ).toEqual([first.map((e) => e.id), second.map((e) => e.id)]);
    expect(await waitingIds()).toEqual([...first, ...second].map((e) => e.id));
    bulk.mockRestore();
  });

  it('an emit alone is one add, resolved once the job is in the queue', async () => {
    await queue.drain();
    const one = event(1);
    await emitter.emit(one);
    expect(await queue.getJobState(one.id)).toBe('waiting');
  });
});

/**
 * A queue that cannot take the events (a Redis of the test's own, stopped; the API's connection
 * fails commands at once, as in production) holds no request: every emit resolves, and each event it held is in the error
 * log, whole. Once Redis is back, the next emits are written: a failed write holds nothing up.
 */
describe('a trail write that fails', () => {
  const dir = tempDir('e2e-trail-group-commit');
  let redis: PrivateRedis;
  let app: NestExpressApplication;

  afterAll(async () => {
    jest.restoreAllMocks();
    await app?.close();
    await redis?.stop();
  });

  it('loses nothing silently, and the next write goes through once the queue is back', async () => {
    redis = await startPrivateRedis({ dir: join(dir, 'redis') });
    app = await createProvisionerApiApp(
      trailOn({ REDIS_URL: redis.url, QUEUE_PREFIX: `gc${randomUUID().slice(0, 8)}` }),
    );
    await app.init();
    const queue = app.get<Queue>(getQueueToken(TRAIL_QUEUE));
    const emitter = app.get(TrailEmitter);
    const before = event(0);
    await emitter.emit(before);
    expect(await queue.getJobState(before.id)).toBe('waiting');

    await redis.stop();
    const errors = jest.spyOn(Logger.prototype, 'error');
    const lost = Array.from({ length: 6 }, (_x, n) => event(n));
    await Promise.all(lost.map((e) => emitter.emit(e)));
    const logged = errors.mock.calls
      .map(([fields]) => (fields as { events?: TrailEvent[] } | undefined)?.events ?? [])
      .flat();
    expect(logged).toEqual(lost.map((e) => expect.objectContaining(e)));
    errors.mockRestore();

    redis = await startPrivateRedis({ dir: join(dir, 'redis'), port: redis.port });
    const after = event(7);
    // The API's connection comes back on its own (ioredis reconnects); until then an emit fails.
    await until(
      async () => {
        await emitter.emit(after);
        return (await queue.getJobState(after.id).catch(() => 'unknown')) === 'waiting';
      },
      'an event queued once Redis is back',
      20_000,
      100,
    );
  }, 60_000);
});
