import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Worker, WorkerOptions } from 'node:worker_threads';

let semiSpaceFlagCleared = false;

/**
 * V8's `--max-semi-space-size` (the worker's command line sets 4 MiB for the main isolate) is
 * one flag for the whole process, and V8 reads it for every isolate it creates, over a thread's
 * own `resourceLimits.maxYoungGenerationSizeMb`: a copy thread given a 1 MiB young generation
 * grew it to 8 MiB like the main thread's (measured in the S3 scale bench). The main isolate's
 * heap is configured once, at its start, so clearing the flag before the first thread starts
 * leaves the main thread's young generation as the command line set it and gives each thread
 * the one it asks for. Only for a thread that asks for one (else V8's default would apply).
 */
function clearSemiSpaceFlagFor(options: WorkerOptions): void {
  if (semiSpaceFlagCleared || options.resourceLimits?.maxYoungGenerationSizeMb === undefined) return;
  setFlagsFromString('--max-semi-space-size=0');
  semiSpaceFlagCleared = true;
}

/**
 * Starts a worker thread on `entry` (an absolute path without extension): the compiled
 * JavaScript in the built app (whose build rewrote the `@app/...` imports); under ts-jest or
 * ts-node the TypeScript source, loaded through ts-node in the thread with the tsconfig's paths
 * (require hooks are per thread, so the parent's do not apply there; the copy threads load
 * `@app/crypt4gh`).
 */
export function startWorkerThread(entry: string, options: WorkerOptions = {}): Worker {
  clearSemiSpaceFlagFor(options);
  if (!__filename.endsWith('.ts')) return new Worker(`${entry}.js`, options);
  const resolve = createRequire(__filename).resolve;
  const tsNode = JSON.stringify(resolve('ts-node'));
  const tsconfigPaths = JSON.stringify(resolve('tsconfig-paths'));
  const source = JSON.stringify(`${entry}.ts`);
  const searchDir = JSON.stringify(dirname(entry));
  return new Worker(
    `require(${tsNode}).register({ transpileOnly: true, projectSearchDir: ${searchDir} });\n` +
      `const paths = require(${tsconfigPaths});\n` +
      `const config = paths.loadConfig(${searchDir});\n` +
      `if (config.resultType === 'success')\n` +
      `  paths.register({ baseUrl: config.absoluteBaseUrl, paths: config.paths });\n` +
      `require(${source});`,
    { ...options, eval: true },
  );
}
