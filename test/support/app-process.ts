import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { freePort } from '../../scripts/lib/child-process';
import { trackPeak } from './process-memory';
import { PROCESS_START_MS } from './timeouts';
import { poll } from './wait';

const ROOT = resolve(__dirname, '../..');

export type AppName = 'catalog-api' | 'provisioner';

/** Newest modification time of the TypeScript sources under these folders. */
function newestSource(dirs: string[]): number {
  let newest = 0;
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  dirs.forEach(walk);
  return newest;
}

/**
 * How to run an entry point (`src/main`, `src/worker`, `src/database/migrate`) as its own
 * process: the built file when `npm run build` has produced it and it is newer than every
 * source (as in CI), else the TypeScript source through ts-node, so a stale build is never
 * what gets tested.
 */
export function entryCommand(app: AppName, entry: string): { args: string[]; built: boolean } {
  const built = join(ROOT, 'dist/apps', app, 'apps', app, `${entry}.js`);
  if (existsSync(built)) {
    const sources = newestSource([join(ROOT, 'apps', app, 'src'), join(ROOT, 'libs')]);
    if (statSync(built).mtimeMs >= sources) return { args: [built], built: true };
  }
  return {
    args: [
      '-r',
      'ts-node/register/transpile-only',
      '-r',
      'tsconfig-paths/register',
      join(ROOT, 'apps', app, `${entry}.ts`),
    ],
    built: false,
  };
}

/** What Kubernetes runs an entry point as (the names of test/robustness/support/memory-limits.ts). */
function roleOf(app: AppName, entry: string): string {
  if (app === 'provisioner' && entry === 'src/worker') return 'worker';
  if (app === 'provisioner' && entry === 'src/main') return 'provisioner-api';
  if (app === 'catalog-api' && entry === 'src/main') return 'catalog';
  return `${app} ${entry}`;
}

export interface AppProcess {
  child: ChildProcess;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Resolves once the output matches; rejects if the process exits first. */
  waitFor(pattern: RegExp): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts an entry point with exactly `env` (plus PATH), so no developer setting leaks in;
 * `nodeArgs` go to node itself (e.g. the heap flags a deployment runs it with).
 */
export function startAppProcess(
  app: AppName,
  entry: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): AppProcess {
  const { args, built } = entryCommand(app, entry);
  const child = spawn(process.execPath, [...nodeArgs, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const waiters: { pattern: RegExp; done: () => void }[] = [];
  const onData = (chunk: Buffer): void => {
    text += chunk.toString();
    for (const waiter of [...waiters]) {
      if (waiter.pattern.test(text)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.done();
      }
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on('exit', (code, signal) => done({ code, signal })),
  );
  if (child.pid !== undefined) trackPeak(roleOf(app, entry), child.pid, built, exited);
  return {
    child,
    output: () => text,
    exited,
    waitFor: (pattern) =>
      pattern.test(text)
        ? Promise.resolve()
        : new Promise<void>((done, fail) => {
            waiters.push({ pattern, done });
            void exited.then(({ code, signal }) =>
              fail(
                new Error(`exited (${code ?? signal}) before ${pattern}:\n${text.slice(-2000)}`),
              ),
            );
          }),
  };
}

// A TCP port that was free a moment ago (the apps refuse PORT=0): the scripts' helper.
export { freePort };

/**
 * Starts an entry point as a service on a free loopback port (`portSetting` names its port
 * setting) and resolves once its `/health/ready` answers 200: a replica, an API, a worker.
 */
export async function startServiceProcess(
  app: AppName,
  entry: string,
  env: Record<string, string>,
  portSetting = 'PORT',
): Promise<AppProcess & { url: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = startAppProcess(app, entry, { ...env, [portSetting]: String(port), HOST: '127.0.0.1' });
  await poll(
    async () => {
      if (started.child.exitCode !== null)
        throw new Error(`${app} ${entry} exited (${started.child.exitCode}):\n${started.output()}`);
      const ready = await fetch(`${url}/health/ready`).then(
        (r) => r.ok,
        () => false,
      );
      return ready ? true : undefined;
    },
    `${app} ${entry} to be ready`,
    PROCESS_START_MS,
    200,
  );
  return { ...started, url };
}

/** Stops a service started here (SIGTERM: a graceful shutdown) and waits for its exit. */
export async function stopServiceProcess(service: AppProcess): Promise<void> {
  if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGTERM');
  await service.exited;
}
