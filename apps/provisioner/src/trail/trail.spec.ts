import type { Queue } from 'bullmq';
import type { ProvisionerSettings } from '../config/provisioner.settings';
import { TrailEmitter } from './trail-emitter';
import { derivedEventId, TRAIL_MAX_BACKOFF_MS, trailBackoffMs } from './trail.queue';

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
});
