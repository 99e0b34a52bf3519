import { appendFileSync, mkdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { deployedMemoryLimit } from '../../../scripts/lib/deployed-node-args';
import { processPeaks } from '../../support/process-memory';

/**
 * Set up after the environment of every robustness test file: once the file's tests are done,
 * each app process it started must have stayed well inside the memory limit its Kubernetes
 * manifest sets: its peak resident set (VmHWM) at most LINE (75 %) of the limit, so that no
 * hostile input takes a pod near its OOM kill. Each peak is printed against that line and
 * appended to .data/robustness-memory.jsonl. Only processes run from the build
 * (as deployed, and as CI runs them after `npm run build`) are held to it: from the TypeScript
 * sources, ts-node's compiler adds some 150 MB that production never carries.
 */
const MANIFESTS: Record<string, string> = {
  worker: 'provisioner/worker-deployment.yaml',
  'provisioner-api': 'provisioner/api-deployment.yaml',
  catalog: 'catalog-api/deployment.yaml',
};

const MiB = 1024 * 1024;
/** The share of its manifest's limit a process may reach at its peak. */
const LINE = 0.75;
const REPORT = resolve(__dirname, '../../../.data/robustness-memory.jsonl');

afterAll(() => {
  const file = basename(expect.getState().testPath ?? 'unknown');
  const over: string[] = [];
  for (const { role, pid, built, peakBytes } of processPeaks()) {
    const manifest = MANIFESTS[role];
    if (!manifest || peakBytes === 0) continue;
    const limit = deployedMemoryLimit(manifest);
    const allowed = limit * LINE;
    const line = {
      file,
      role,
      pid,
      built,
      peak_mib: Math.round(peakBytes / MiB),
      line_mib: Math.round(allowed / MiB),
      limit_mib: limit / MiB,
      share_of_limit: Math.round((peakBytes / limit) * 100) / 100,
    };
    process.stdout.write(`memory: ${JSON.stringify(line)}\n`);
    mkdirSync(join(REPORT, '..'), { recursive: true });
    appendFileSync(REPORT, `${JSON.stringify(line)}\n`);
    if (built && peakBytes > allowed)
      over.push(
        `${role} (pid ${pid}) peaked at ${line.peak_mib} MiB, over ${LINE * 100} % of its limit of ${line.limit_mib} MiB (${line.line_mib} MiB)`,
      );
  }
  expect(over).toEqual([]);
});
