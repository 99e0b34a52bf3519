import { ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { freePort } from '../../../../test/support/app-process';
import { poll } from '../../../../test/support/wait';

const REPO = resolve(__dirname, '../../../..');
/** A worker booting under ts-node (no build) on a loaded machine. */
export const WORKER_START_MS = 60_000;

/** The real worker entry point as its own process, so it can be killed like a crashed pod. */
export async function startWorkerProcess(env: Record<string, string>): Promise<ChildProcess> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register', '-r', 'tsconfig-paths/register', 'apps/provisioner/src/worker.ts'],
    {
      cwd: REPO,
      env: {
        ...process.env,
        ...env,
        WORKER_HEALTH_PORT: String(port),
        TS_NODE_TRANSPILE_ONLY: '1',
        TS_NODE_PROJECT: 'tsconfig.json',
        LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      },
      stdio: 'ignore',
    },
  );
  return poll(
    async () => {
      if (child.exitCode !== null) throw new Error(`worker exited with ${child.exitCode}`);
      const ok = await fetch(`http://127.0.0.1:${port}/health/ready`).then(
        (r) => r.ok,
        () => false,
      );
      return ok ? child : undefined;
    },
    'the worker to be ready',
    WORKER_START_MS,
    200,
  );
}
