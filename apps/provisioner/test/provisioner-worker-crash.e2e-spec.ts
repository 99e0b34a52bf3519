import { ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { freePort } from '../../../test/support/app-process';
import { provisionerTestSettings, TEST_WRITE_KEY } from '../../../test/support/provisioner-app';
import { createProvisionerApiApp } from '../src/http-app';
import { DropzoneFixture, tempDir, writeSparseZeros, zeroSha256 } from './support/dropzone-fixture';
import { poll } from '../../../test/support/wait';
import {
  dropzoneEnv,
  TERMINAL_STATES,
  waitForImport,
  waitWhileCopying,
} from './support/provisioner-e2e';

const SIZE = 1024 * 1024 * 1024;
/** Copying and hashing 1 GiB on a loaded machine. */
const COPY_WAIT_MS = 120_000;
/** A worker booting under ts-node (no build) on a loaded machine. */
const WORKER_START_MS = 60_000;

// Two workers boot, the first copy runs until the kill, the second copies it all again.
jest.setTimeout(2 * WORKER_START_MS + 2 * COPY_WAIT_MS);
const REPO = resolve(__dirname, '../../..');

/** The real worker entry point as its own process, so it can be killed like a crashed pod. */
async function startWorker(env: Record<string, string>): Promise<ChildProcess> {
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

describe('a worker killed with SIGKILL in the middle of a large copy', () => {
  const workers: ChildProcess[] = [];
  let api: NestExpressApplication;

  afterAll(async () => {
    for (const worker of workers) if (worker.exitCode === null) worker.kill('SIGKILL');
    await api?.close();
  });

  it('restarts: the import completes once, nothing partial is ever visible, staging is cleaned', async () => {
    const base = tempDir('e2e-crash');
    const dropzone = new DropzoneFixture(join(base, 'dropzone'));
    const storageRoot = join(base, 'storage');
    dropzone.submission('SUB-BIG', { project: 'PRJ1', datasets: ['DS-BIG'] });
    dropzone.dataset('DS-BIG', {
      submission: 'SUB-BIG',
      files: { 'small.txt': 'small' },
      manifestText: { sha256: '' },
    });
    // A sparse 1 GiB file: big enough to be caught mid-copy, cheap to create.
    writeSparseZeros(join(dropzone.datasetDir('DS-BIG'), 'payload/big/zeros.bin'), SIZE);
    const smallSha = createHash('sha256').update('small').digest('hex');
    writeFileSync(
      join(dropzone.datasetDir('DS-BIG'), 'manifest-sha256.txt'),
      `${zeroSha256(SIZE)}  big/zeros.bin\n${smallSha}  small.txt\n`,
    );

    const env = await dropzoneEnv(dropzone, storageRoot, { IMPORT_LOCK_MS: '2000' });
    api = await createProvisionerApiApp(provisionerTestSettings(env));
    await api.init();
    workers.push(await startWorker(env));

    const finalPath = join(storageRoot, 'projects/PRJ1/SUB-BIG/data/raw/DS-BIG');
    const violations: string[] = [];
    // Watch the final path the whole time: it is either absent or complete.
    const watcher = setInterval(() => {
      if (!existsSync(finalPath)) return;
      const provenance = existsSync(join(finalPath, '.provisioner/provenance.json'));
      const size = existsSync(join(finalPath, 'big/zeros.bin'))
        ? statSync(join(finalPath, 'big/zeros.bin')).size
        : -1;
      if (!provenance || size !== SIZE)
        violations.push(`partial at the final path: provenance=${provenance} size=${size}`);
    }, 10);

    try {
      const res = await request(api.getHttpServer())
        .post('/datasets/dropzone/import')
        .set('X-API-Key', TEST_WRITE_KEY)
        .send({ dataset_id: 'DS-BIG' });
      expect(res.status).toBe(202);
      const copying = await waitWhileCopying(
        api,
        res.body.id,
        (r) => r.state === 'running' && r.progress.bytes_done > 0,
        COPY_WAIT_MS,
      );
      expect(copying.progress.bytes_done).toBeLessThan(SIZE + 5);
      workers[0].kill('SIGKILL');
      await new Promise((r) => workers[0].once('exit', r));
      expect(existsSync(finalPath)).toBe(false);
      // One staging area per attempt: <import id>~data~a<attempt>-<worker>-<random>.
      expect(readdirSync(join(storageRoot, '.staging'))).toEqual(
        expect.arrayContaining([expect.stringMatching(/^dropzone-dataset-DS-BIG~data~a1-/)]),
      );

      // Leftovers the restarted worker's reconciliation must handle: staging of an attempt that
      // is not running (removed) and a published dataset without provenance (reported, kept).
      mkdirSync(join(storageRoot, '.staging/dropzone-dataset-GHOST/sub'), { recursive: true });
      writeFileSync(join(storageRoot, '.staging/dropzone-dataset-GHOST/sub/part'), 'half');
      mkdirSync(join(storageRoot, 'projects/PRJ1/SUB-OLD/data/raw/DS-OLD'), { recursive: true });
      writeFileSync(join(storageRoot, 'projects/PRJ1/SUB-OLD/data/raw/DS-OLD/data.bin'), 'keep me');

      workers.push(await startWorker(env));
      expect(existsSync(join(storageRoot, '.staging/dropzone-dataset-GHOST'))).toBe(false);
      expect(
        readFileSync(join(storageRoot, 'projects/PRJ1/SUB-OLD/data/raw/DS-OLD/data.bin'), 'utf8'),
      ).toBe('keep me');
      const done = await waitForImport(api, res.body.id, TERMINAL_STATES, COPY_WAIT_MS);
      expect(done).toMatchObject({ state: 'imported', error: null });
      expect(done.attempts).toBeGreaterThanOrEqual(2);
      const provenance = JSON.parse(
        readFileSync(join(finalPath, '.provisioner/provenance.json'), 'utf8'),
      );
      expect(provenance.import.attempt).toBe(done.attempts);
      expect(provenance.totals).toEqual({ files: 2, bytes: SIZE + 5 });
      expect(statSync(join(finalPath, 'big/zeros.bin')).size).toBe(SIZE);
      expect(readdirSync(join(storageRoot, 'projects/PRJ1/SUB-BIG/data/raw'))).toEqual(['DS-BIG']);
      expect(readdirSync(join(storageRoot, '.staging'))).toEqual([]);
    } finally {
      clearInterval(watcher);
    }
    expect(violations).toEqual([]);
  });
});
