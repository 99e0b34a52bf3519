import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Worker, WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker thread on `entry` (an absolute path without extension): the compiled
 * JavaScript in the built app; under ts-jest or ts-node the TypeScript source, loaded through
 * ts-node in the thread (require hooks are per thread, so the parent's do not apply there).
 */
export function startWorkerThread(entry: string, options: WorkerOptions = {}): Worker {
  if (!__filename.endsWith('.ts')) return new Worker(`${entry}.js`, options);
  const tsNode = JSON.stringify(createRequire(__filename).resolve('ts-node'));
  const source = JSON.stringify(`${entry}.ts`);
  const searchDir = JSON.stringify(dirname(entry));
  return new Worker(
    `require(${tsNode}).register({ transpileOnly: true, projectSearchDir: ${searchDir} });\n` +
      `require(${source});`,
    { ...options, eval: true },
  );
}
