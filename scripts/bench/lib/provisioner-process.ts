import { join } from 'node:path';
import { freePort, PROVISIONER_DIST, RunningProcess, startNodeProcess } from './processes';
import { deployedNodeArgs } from '../../lib/deployed-node-args';

export const BENCH_WRITE_KEY = 'bench-provisioner-write-key-0123456789abcdef';

export interface ProvisionerEnvOptions {
  /** The queue on Redis; without it, on BullMQ's PostgreSQL backend at databaseUrl. */
  redisUrl?: string;
  databaseUrl?: string;
  dropzone: string;
  storage: string;
  extra?: NodeJS.ProcessEnv;
}

export function provisionerEnv(options: ProvisionerEnvOptions): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : { DATABASE_URL: options.databaseUrl }),
    QUEUE_PREFIX: 'bench',
    PROVISIONER_API_KEY: BENCH_WRITE_KEY,
    STORAGE_ROOT: options.storage,
    SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: options.dropzone }]),
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    ...options.extra,
  };
}

/** The built provisioner API (node dist/…/main.js) on a free loopback port. */
export async function startProvisionerApi(
  env: NodeJS.ProcessEnv,
  /** A port chosen beforehand (DRS_PUBLIC_URL must name it before the start). */
  chosenPort?: number,
): Promise<RunningProcess & { url: string }> {
  const port = chosenPort ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  // As the manifests start it (k8s/base/provisioner/api-deployment.yaml).
  const running = await startNodeProcess(join(PROVISIONER_DIST, 'main.js'), { ...env, PORT: String(port) }, `${url}/health/ready`, {
    nodeArgs: ['--max-semi-space-size=4', '--max-old-space-size=192'],
  });
  return { ...running, url };
}

/** The worker's V8 flags, read from the manifest that starts it in Kubernetes. */
export const WORKER_NODE_ARGS = deployedNodeArgs('provisioner/worker-deployment.yaml');

/** A built worker process (node dist/…/worker.js); its health port is free and loopback-only. */
export async function startWorker(env: NodeJS.ProcessEnv, onLine?: (line: string) => void): Promise<RunningProcess> {
  const port = await freePort();
  return startNodeProcess(
    join(PROVISIONER_DIST, 'worker.js'),
    { ...env, WORKER_HEALTH_PORT: String(port) },
    `http://127.0.0.1:${port}/health/ready`,
    { nodeArgs: WORKER_NODE_ARGS, onLine },
  );
}
