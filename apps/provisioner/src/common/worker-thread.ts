import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Worker, WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker thread on `entry` (an absolute path without extension): the compiled
 * JavaScript in the built app (whose build rewrote the `@app/...` imports); under ts-jest or
 * ts-node the TypeScript source, loaded through ts-node in the thread with the tsconfig's paths
 * (require hooks are per thread, so the parent's do not apply there; the copy threads load
 * `@app/crypt4gh`).
 */
export function startWorkerThread(entry: string, options: WorkerOptions = {}): Worker {
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
