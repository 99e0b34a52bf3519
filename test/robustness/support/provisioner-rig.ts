import { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, ftruncateSync, openSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { createProvisionerApiApp } from '../../../apps/provisioner/src/http-app';
import type { ImportRecord } from '../../../apps/provisioner/src/imports/import-record';
import { DropzoneFixture } from '../../../apps/provisioner/test/support/dropzone-fixture';
import { freePort, startAppProcess } from '../../support/app-process';
import { provisionerTestSettings, TEST_WRITE_KEY } from '../../support/provisioner-app';
import { deployedNodeArgs, imageEnv } from '../../../scripts/lib/deployed-node-args';
import { sleep } from './load-loop';

const WORKER_NODE_ARGS = deployedNodeArgs('provisioner/worker-deployment.yaml');

export const PROJECT = 'PRJ1';
export const SUBMISSION = 'SUB-ROBUST';

/** sha256 of `size` zero bytes, computed in 1 MiB steps. */
function zeroSha256(size: number): string {
  const hash = createHash('sha256');
  const chunk = Buffer.alloc(1024 * 1024);
  let left = size;
  while (left > 0) {
    const n = Math.min(left, chunk.length);
    hash.update(n === chunk.length ? chunk : chunk.subarray(0, n));
    left -= n;
  }
  return hash.digest('hex');
}

/**
 * A drop-zone submission of `count` ready datasets, each a sparse zero file of `bigBytes`
 * (cheap to create, long enough to copy that a fault lands mid-copy) plus a few small files.
 */
export function writeDatasets(dropzoneRoot: string, count: number, bigBytes: number, project = PROJECT): string[] {
  const width = count > 99 ? 3 : 2;
  const ids = Array.from({ length: count }, (_, i) => `DS-${String(i + 1).padStart(width, '0')}`);
  const fixture = new DropzoneFixture(dropzoneRoot).submission(SUBMISSION, { project, datasets: ids });
  const bigSha = zeroSha256(bigBytes);
  for (const id of ids) {
    const small: Record<string, string> = {};
    for (let f = 0; f < 5; f++) small[`small/${f}.txt`] = `${id} small file ${f}\n`;
    fixture.dataset(id, { submission: SUBMISSION, files: small, ready: false });
    const dir = fixture.datasetDir(id);
    const fd = openSync(join(dir, 'payload/big.bin'), 'w');
    ftruncateSync(fd, bigBytes);
    closeSync(fd);
    const manifest = readFileSync(join(dir, 'manifest-sha256.txt'), 'utf8');
    writeFileSync(join(dir, 'manifest-sha256.txt'), `${manifest}${bigSha}  big.bin\n`);
    writeFileSync(join(dir, '.ready'), '');
  }
  return ids;
}

export function finalPath(storage: string, id: string): string {
  return join(storage, 'projects', PROJECT, SUBMISSION, 'data/raw', id);
}

/**
 * What must hold for a dataset at its final path whenever it is there at all: complete
 * (provenance written, the big file at full size, every small file). Returns the problem.
 */
export function partialProblem(storage: string, id: string, bigBytes: number): string | undefined {
  const path = finalPath(storage, id);
  if (!existsSync(path)) return undefined;
  try {
    if (!existsSync(join(path, '.provisioner/provenance.json'))) return `${id}: visible without provenance`;
    const size = statSync(join(path, 'big.bin')).size;
    if (size !== bigBytes) return `${id}: big.bin is ${size} of ${bigBytes} bytes`;
    if (readdirSync(join(path, 'small')).length !== 5) return `${id}: small files missing`;
  } catch (error) {
    return `${id}: ${(error as Error).message}`;
  }
  return undefined;
}

export interface WorkerProcess {
  child: ChildProcess;
  /** Its health and metrics port on 127.0.0.1. */
  port: number;
  exited: Promise<unknown>;
  /** Resolves once /health/ready answers (rejects if the process dies first or after 90 s). */
  ready: Promise<void>;
  /** Everything the process wrote so far (its log lines). */
  output(): string;
}

export interface ProvisionerRig {
  api: NestExpressApplication;
  env: Record<string, string>;
  /** Spawns a worker process (its own health port) and returns at once. */
  spawnWorker(extraEnv?: Record<string, string>): Promise<WorkerProcess>;
  /** Spawns a worker and waits until it is ready. */
  startWorker(extraEnv?: Record<string, string>): Promise<WorkerProcess>;
  importDataset(id: string): Promise<{ status: number; record: ImportRecord }>;
  record(id: string): Promise<ImportRecord | undefined>;
  /** Waits (bounded) until every import has ended; returns the records. */
  waitAllEnded(importIds: string[], timeoutMs: number): Promise<ImportRecord[]>;
  close(): Promise<void>;
}

/** The provisioner API in this process; workers as real processes that can be killed. */
export async function startRig(env: Record<string, string>): Promise<ProvisionerRig> {
  const api = await createProvisionerApiApp(provisionerTestSettings(env));
  await api.init();
  const workers: WorkerProcess[] = [];
  const http = () => request(api.getHttpServer());
  const record = async (id: string) => {
    const res = await http().get(`/imports/${encodeURIComponent(id)}`).set('X-API-Key', TEST_WRITE_KEY);
    return res.status === 200 ? (res.body as ImportRecord) : undefined;
  };
const spawnWorker = async (extraEnv: Record<string, string> = {}): Promise<WorkerProcess> => {
    const port = await freePort();
    // With the flags Kubernetes runs it with and the image's allocator settings: its memory is
    // held to the manifest's limit.
    const app = startAppProcess(
      'provisioner',
      'src/worker',
      {
        ...imageEnv(),
        ...env,
        PROVISIONER_API_KEY: TEST_WRITE_KEY,
        LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
        WORKER_HEALTH_PORT: String(port),
        HOST: '127.0.0.1',
        ...extraEnv,
      },
      WORKER_NODE_ARGS,
    );
    const ready = (async () => {
      const deadline = Date.now() + 90_000;
      for (;;) {
        if (app.child.exitCode !== null || app.child.signalCode !== null) {
          throw new Error(`worker exited (${app.child.exitCode ?? app.child.signalCode}):\n${app.output().slice(-2000)}`);
        }
        const ok = await fetch(`http://127.0.0.1:${port}/health/ready`).then((r) => r.ok, () => false);
        if (ok) return;
        if (Date.now() > deadline) throw new Error('worker not ready within 90 s');
        await sleep(100);
      }
    })();
    // A worker killed while starting is expected in fault tests: nobody has to await this.
    ready.catch(() => undefined);
    const worker = { child: app.child, port, exited: app.exited, ready, output: app.output };
    workers.push(worker);
    return worker;
  };
  return {
    api,
    env,
    spawnWorker,
    async startWorker(extraEnv = {}) {
      const worker = await spawnWorker(extraEnv);
      await worker.ready;
      return worker;
    },
    async importDataset(id) {
      const res = await http().post('/datasets/dropzone/import').set('X-API-Key', TEST_WRITE_KEY).send({ dataset_id: id });
      return { status: res.status, record: res.body as ImportRecord };
    },
    record,
    async waitAllEnded(importIds, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const records = await Promise.all(importIds.map(record));
        const ended = records.every((r) => r && ['imported', 'failed', 'rejected'].includes(r.state));
        if (ended || Date.now() > deadline) return records.filter((r): r is ImportRecord => r !== undefined);
        await sleep(200);
      }
    },
    async close() {
      for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
      await Promise.all(workers.map((w) => w.exited));
      await api.close();
    },
  };
}
