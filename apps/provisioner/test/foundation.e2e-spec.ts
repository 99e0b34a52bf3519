import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { AppProcess, freePort, startAppProcess } from '../../../test/support/app-process';
import {
  ProvisionerTestApps,
  queueEnv,
  startProvisionerApps,
  TEST_WRITE_KEY,
} from '../../../test/support/provisioner-app';

// Booting processes without a build (ts-node) is slow on a loaded 2-core machine; nothing here
// is timed, the limit only turns a hang into a failure.
jest.setTimeout(45_000);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const BAD_SETTINGS = { PROVISIONER_API_KEY: 'too-short', IMPORT_CONCURRENCY: '0' };

function expectEnvelope(res: request.Response, status: number, description: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(res.headers['x-request-id']).toBeDefined();
  expect(res.body).toEqual({ status: 'Error', description, more: expect.any(Object) });
}

describe('provisioner foundation', () => {
  let apps: ProvisionerTestApps;
  // Processes are started together up front: each takes seconds to boot without a build.
  let badApi: AppProcess;
  let api: AppProcess;
  let worker: AppProcess;
  let apiPort: number;
  let workerPort: number;

  beforeAll(async () => {
    // The worker loads its settings through the same runMain/loadProvisionerSettings path.
    badApi = startAppProcess('provisioner', 'src/main', BAD_SETTINGS);
    apiPort = await freePort();
    workerPort = await freePort();
    const shared = {
      ...(await queueEnv()),
      HOST: '127.0.0.1',
      PROVISIONER_API_KEY: TEST_WRITE_KEY,
      STORAGE_ROOT: mkdtempSync(join(tmpdir(), 'provisioner-e2e-')),
      LOG_LEVEL: 'info',
    };
    api = startAppProcess('provisioner', 'src/main', { ...shared, PORT: String(apiPort) });
    worker = startAppProcess('provisioner', 'src/worker', {
      ...shared,
      WORKER_HEALTH_PORT: String(workerPort),
    });
    apps = await startProvisionerApps(await queueEnv());
  });

  afterAll(async () => {
    await apps.close();
    for (const proc of [badApi, api, worker]) {
      if (proc.child.exitCode === null && proc.child.signalCode === null)
        proc.child.kill('SIGKILL');
    }
  });

  describe('health', () => {
    it('the API answers live and ready without a key; ready names the queue check', async () => {
      await request(apps.api.getHttpServer()).get('/health/live').expect(200, { status: 'ok' });
      const res = await request(apps.api.getHttpServer()).get('/health/ready').expect(200);
      expect(res.body).toEqual({ status: 'ok', checks: { queue: 'up' } });
    });

    it('the worker has its own live and ready endpoints', async () => {
      await request(apps.worker.getHttpServer()).get('/health/live').expect(200, { status: 'ok' });
      const res = await request(apps.worker.getHttpServer()).get('/health/ready').expect(200);
      expect(res.body).toEqual({ status: 'ok', checks: { queue: 'up' } });
    });
  });

  describe('HTTP conventions on the real API', () => {
    it('returns a request id on every response and echoes a well-formed one', async () => {
      const made = await request(apps.api.getHttpServer()).get('/health/live');
      expect(made.headers['x-request-id']).toMatch(UUID);
      const echoed = await request(apps.api.getHttpServer())
        .get('/health/ready')
        .set('X-Request-Id', 'trace-7');
      expect(echoed.headers['x-request-id']).toBe('trace-7');
    });

    it('answers an unknown path with the 404 envelope', async () => {
      expectEnvelope(
        await request(apps.api.getHttpServer()).get('/api/no-such-thing'),
        404,
        'Not found',
      );
      expectEnvelope(
        await request(apps.worker.getHttpServer()).get('/api/no-such-thing'),
        404,
        'Not found',
      );
    });

    it('answers a wrong method with 405 and Allow', async () => {
      const res = await request(apps.api.getHttpServer()).post('/health/live');
      expectEnvelope(res, 405, 'Method not allowed');
      expect(res.headers.allow).toBe('GET, HEAD');
    });
  });

  describe('the processes', () => {
    it('the API exits 1 listing every bad setting', async () => {
      const { code } = await badApi.exited;
      expect(code).toBe(1);
      const output = badApi.output();
      expect(output).toContain('Invalid settings:');
      expect(output).toContain(
        '- DATABASE_URL must be a postgres:// URL (it is required when REDIS_URL is not set)',
      );
      expect(output).toContain('- PROVISIONER_API_KEY must be at least 32 characters long');
      expect(output).toMatch(/- IMPORT_CONCURRENCY /);
    });

    it.each([
      ['API', () => api, () => apiPort],
      ['worker', () => worker, () => workerPort],
    ])(
      'the %s serves, then shuts down cleanly with exit code 0 on SIGTERM',
      async (_name, proc, port) => {
        await proc().waitFor(/Nest application successfully started/);
        const ready = await fetch(`http://127.0.0.1:${port()}/health/ready`);
        expect(ready.status).toBe(200);
        proc().child.kill('SIGTERM');
        expect(await proc().exited).toEqual({ code: 0, signal: null });
      },
    );
  });
});
