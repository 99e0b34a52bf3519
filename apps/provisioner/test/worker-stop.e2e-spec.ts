import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PrivateRedis, startPrivateRedis } from '../../../scripts/lib/private-redis';
import { startServiceProcess, type AppProcess } from '../../../test/support/app-process';
import { PROCESS_START_MS } from '../../../test/support/timeouts';

/**
 * A worker whose queue is gone still stops promptly on SIGTERM (issue 55: a worker outlived
 * `npm start`, retrying its vanished Sentinels for 12 minutes and holding its port).
 */
describe('a worker that cannot reach its queue', () => {
  const base = mkdtempSync(join(tmpdir(), 'worker-stop-'));
  let redis: PrivateRedis | undefined;
  let worker: AppProcess | undefined;
  afterAll(async () => {
    if (worker?.child.exitCode === null) worker.child.kill('SIGKILL');
    await redis?.stop();
    rmSync(base, { recursive: true, force: true });
  });

  it(
    'stops within seconds of SIGTERM, saying why',
    async () => {
      redis = await startPrivateRedis({ dir: join(base, 'redis') });
      worker = await startServiceProcess(
        'provisioner',
        'src/worker',
        {
          REDIS_URL: redis.url,
          QUEUE_PREFIX: 'stop',
          SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: join(base, 'dz') }]),
          STORAGE_ROOT: join(base, 'storage'),
          LOG_LEVEL: 'warn',
        },
        'WORKER_HEALTH_PORT',
      );
      await redis.stop();
      const signalled = Date.now();
      worker.child.kill('SIGTERM');
      const { code } = await worker.exited;
      // The queue has 2 s to answer (QUEUE_ANSWER_ON_STOP_MS); before, it waited for Redis.
      expect(Date.now() - signalled).toBeLessThan(10_000);
      expect(code).toBe(0);
      expect(worker.output()).toContain('SIGTERM: the queue cannot be reached');
    },
    PROCESS_START_MS + 30_000,
  );
});
