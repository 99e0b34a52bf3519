import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PrivateRedis, startPrivateRedis } from '../../../scripts/lib/private-redis';
import { startSentinelSet, type SentinelSet } from '../../../test/support/redis-servers';
import { startServiceProcess, type AppProcess } from '../../../test/support/app-process';
import { PROCESS_START_MS } from '../../../test/support/timeouts';

/**
 * A worker whose queue is gone still stops promptly on SIGTERM (issue 55: a worker outlived
 * `npm start`, retrying its vanished Sentinels for 12 minutes and holding its port).
 */
describe('a worker that cannot reach its queue', () => {
  const base = mkdtempSync(join(tmpdir(), 'worker-stop-'));
  let redis: PrivateRedis | undefined;
  let set: SentinelSet | undefined;
  let worker: AppProcess | undefined;
  afterEach(() => {
    if (worker?.child.exitCode === null) worker.child.kill('SIGKILL');
  });
  afterAll(async () => {
    await redis?.stop();
    await set?.stop();
    rmSync(base, { recursive: true, force: true });
  });

  /** A worker process on `queue` (its queue settings), under its own prefix and storage. */
  const startWorker = (queue: Record<string, string>, name: string) =>
    startServiceProcess(
      'provisioner',
      'src/worker',
      {
        ...queue,
        QUEUE_PREFIX: name,
        SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: join(base, 'dz') }]),
        STORAGE_ROOT: join(base, `storage-${name}`),
        LOG_LEVEL: 'warn',
      },
      'WORKER_HEALTH_PORT',
    );

  /** SIGTERM to a worker whose queue is gone: it exits 0 within seconds, and says why. */
  async function expectPromptStop(running: AppProcess): Promise<void> {
    const signalled = Date.now();
    running.child.kill('SIGTERM');
    const { code } = await running.exited;
    // The queue has 2 s to answer (QUEUE_ANSWER_ON_STOP_MS); before, it waited for Redis.
    expect(Date.now() - signalled).toBeLessThan(10_000);
    expect(code).toBe(0);
    expect(running.output()).toContain('SIGTERM: the queue cannot be reached');
  }

  it(
    'stops within seconds of SIGTERM, saying why',
    async () => {
      redis = await startPrivateRedis({ dir: join(base, 'redis') });
      worker = await startWorker({ REDIS_URL: redis.url }, 'stop');
      await redis.stop();
      await expectPromptStop(worker);
    },
    PROCESS_START_MS + 30_000,
  );

  // As found: npm start killed after its Sentinel set had been shut down; the worker kept
  // asking the Sentinels for a primary (ioredis retries them without end).
  it(
    'stops within seconds of SIGTERM when its whole Sentinel set is gone',
    async () => {
      set = await startSentinelSet({ dir: join(base, 'sentinels') });
      worker = await startWorker(
        { REDIS_SENTINELS: set.sentinels, REDIS_SENTINEL_NAME: set.name },
        'sentinel',
      );
      await set.stop();
      await expectPromptStop(worker);
    },
    PROCESS_START_MS + 30_000,
  );
});
