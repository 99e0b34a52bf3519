import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

export const ROOT = resolve(__dirname, '../../..');
/**
 * The benchmarks build into .bench/dist, not dist/: the same Nest CLI build with the app's own
 * tsconfig, only another output directory, so a concurrent `npm run build` cannot swap files
 * under a running benchmark (and the benchmark cannot disturb a running `npm start`).
 */
const BUILD_DIR = join(ROOT, '.bench/dist');
export const CATALOG_DIST = join(BUILD_DIR, 'catalog-api/apps/catalog-api/src');
export const PROVISIONER_DIST = join(BUILD_DIR, 'provisioner/apps/provisioner/src');

import {
  cpuMs,
  freePort,
  processMemory,
  sleep,
  statCpuMs,
  stopChild,
} from '../../lib/child-process';
import { imageEnv } from '../../lib/deployed-node-args';

export { cpuMs, freePort, processMemory, sleep, stopChild };

/**
 * CPU time in ms of every PostgreSQL server process on the machine (the bench's databases live
 * on the shared server): compared before and after a request, what the database spent on it.
 */
export function postgresCpuMs(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === 'postgres')
        total += statCpuMs(stat, false);
    } catch {
      // Ended between the listing and the read.
    }
  }
  return total;
}

/** Builds one app with the Nest CLI, as `npm run build` does, into .bench/dist/<app>. */
export function buildApp(app: 'catalog-api' | 'provisioner'): void {
  mkdirSync(BUILD_DIR, { recursive: true });
  const tsconfig = join(BUILD_DIR, `tsconfig.${app}.json`);
  writeFileSync(
    tsconfig,
    JSON.stringify({
      extends: `../../apps/${app}/tsconfig.app.json`,
      compilerOptions: { outDir: `./${app}` },
    }),
  );
  const result = spawnSync('npx', ['nest', 'build', app, '--path', relative(ROOT, tsconfig)], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (result.status !== 0) throw new Error(`nest build ${app} failed (${result.status})`);
  // nest-cli.json copies the catalog's vocabularies to dist/ whatever the output directory, so
  // the bench's build gets its own copy (the catalog's migrations load them).
  if (app === 'catalog-api')
    cpSync(
      join(ROOT, 'apps/catalog-api/src/terms/vocabularies'),
      join(CATALOG_DIST, 'terms/vocabularies'),
      { recursive: true },
    );
}

export function requireBuilt(path: string): string {
  if (!existsSync(path)) throw new Error(`${path} is missing: drop --no-build`);
  return path;
}

/** Runs a built script to completion (migrations, loaders); throws with its stderr on failure. */
export function runScript(script: string, env: NodeJS.ProcessEnv): string {
  const out = spawnSync(process.execPath, [requireBuilt(script)], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
  });
  if (out.status !== 0) throw new Error(`${script} exited ${out.status}:\n${out.stderr}`);
  return out.stdout;
}

export interface RunningProcess {
  child: ChildProcess;
  /** Milliseconds from spawn until the readiness URL answered 2xx. */
  readyAfterMs: number;
  stop(): Promise<void>;
}

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * Starts `node <script>` with `env` and waits (bounded) until `readyUrl` answers. Output goes to
 * the parent's stderr so a crash is visible; LOG_LEVEL=warn keeps request logs out of the way.
 */
export async function startNodeProcess(
  script: string,
  env: NodeJS.ProcessEnv,
  readyUrl: string,
  options: {
    timeoutMs?: number;
    nodeArgs?: string[];
    /** Each line the process prints on stdout (still passed through to this one's). */
    onLine?: (line: string) => void;
  } = {},
): Promise<RunningProcess> {
  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? 60_000;
  // BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the measured process.
  const nodeArgs = [
    ...(options.nodeArgs ?? []),
    ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
  ];
  const child = spawn(process.execPath, [...nodeArgs, requireBuilt(script)], {
    cwd: ROOT,
    // The allocator's settings the image gives every process: their memory is the image's.
    env: { ...imageEnv(), ...env },
    stdio: ['ignore', options.onLine ? 'pipe' : 'inherit', 'inherit'],
  });
  if (options.onLine) {
    const onLine = options.onLine;
    let partial = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop()!;
      for (const line of lines) onLine(line);
    });
  }
  const deadline = Date.now() + timeoutMs;
  while (!(await answers(readyUrl))) {
    if (child.exitCode !== null)
      throw new Error(`${script} exited (${child.exitCode}) before it was ready`);
    if (Date.now() > deadline) {
      await stopChild(child);
      throw new Error(`${script} not ready within ${timeoutMs / 1000} s`);
    }
    await sleep(50);
  }
  return { child, readyAfterMs: performance.now() - started, stop: () => stopChild(child) };
}
