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
import { sendRaw } from '../../../test/support/raw-http';
import { PROCESS_START_MS } from '../../../test/support/timeouts';
import { poll } from '../../../test/support/wait';

// Booting processes without a build (ts-node) is slow on a loaded 2-core machine; nothing here
// is timed, the limit only turns a hang into a failure.
jest.setTimeout(PROCESS_START_MS);

const BAD_SETTINGS = { PROVISIONER_API_KEY: 'too-short', IMPORT_CONCURRENCY: '0' };

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

    it('the worker has its own live and ready endpoints; ready names its workers too', async () => {
      await request(apps.worker.getHttpServer()).get('/health/live').expect(200, { status: 'ok' });
      const res = await request(apps.worker.getHttpServer()).get('/health/ready').expect(200);
      expect(res.body).toEqual({ status: 'ok', checks: { queue: 'up', workers: 'up' } });
    });
  });

  describe('the processes', () => {
    it('the API exits 1 listing every bad setting', async () => {
      const { code } = await badApi.exited;
      expect(code).toBe(1);
      const output = badApi.output();
      expect(output).toContain('Invalid settings:');
      expect(output).toContain(
        '- DATABASE_URL must be a postgres:// URL (it is required when neither REDIS_URL, REDIS_SENTINELS nor REDIS_CLUSTER_NODES is set)',
      );
      expect(output).toContain('- PROVISIONER_API_KEY must be at least 32 characters long');
      expect(output).toMatch(/- IMPORT_CONCURRENCY /);
    });

    it('logs no credential it is sent or hands out: an access URL’s token, the dashboard’s session cookie', async () => {
      await api.waitFor(/Nest application successfully started/);
      const base = `http://127.0.0.1:${apiPort}`;
      const token = 'eyJvIjoieCIsImUiOjF9.logged-token-must-not-appear';
      // A token of the real shape (payload, 43-character MAC) in other spellings of the route,
      // which answer 404: redacted by its shape, wherever it stands.
      const mac = 'Mac0fAnAccessUrlThatMustNotBeLoggedAnywhere';
      const shaped = `${Buffer.from('{"o":"P~S~D","s":"x","e":1}').toString('base64url')}.${mac}`;
      const spellings = ['//drs-bytes/', '/./drs-bytes/', '/drs-bytes;x/', '/%64rs-bytes/'];
      const ids: string[] = [];
      for (const path of [
        `/drs-bytes/${token}/reads.bam`,
        `/DRS-BYTES/${token}/reads.bam`,
        ...spellings.map((route) => `${route}${shaped}/reads.bam`),
      ]) {
        // As sent, byte for byte: a client library would normalise `/./` and the like.
        const res = await sendRaw(
          apiPort,
          `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
        );
        expect([path, res?.status]).toEqual([path, 404]);
        ids.push(res!.headers['x-request-id']);
      }
      const page = await fetch(`${base}/admin/queues`, {
        headers: { 'X-API-Key': TEST_WRITE_KEY },
      });
      expect(page.status).toBe(200);
      await page.arrayBuffer();
      const session = page.headers.get('set-cookie')!.split(';')[0].split('=')[1];
      expect(session).toMatch(/^\d+\.[A-Za-z0-9_-]{43}$/);
      ids.push(page.headers.get('x-request-id')!);

      // Every request has its access line (JSON, with its id) before the output is searched.
      const lines = await poll(() => {
        const found = api
          .output()
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map(
            (line) =>
              JSON.parse(line) as {
                req?: { id?: string; url?: string };
                res?: { headers?: Record<string, unknown> };
              },
          )
          .filter((line) => line.res !== undefined && ids.includes(line.req?.id ?? ''));
        return found.length === ids.length ? found : undefined;
      }, 'an access line for each request');
      expect(lines.map((line) => line.req?.url)).toEqual([
        '/drs-bytes/[REDACTED]/reads.bam',
        '/DRS-BYTES/[REDACTED]/reads.bam',
        ...spellings.map((route) => `${route}[REDACTED]/reads.bam`),
        '/admin/queues',
      ]);
      expect(lines.at(-1)?.res?.headers?.['set-cookie']).toBe('[REDACTED]');
      expect(api.output()).not.toContain('logged-token-must-not-appear');
      expect(api.output()).not.toContain(mac);
      expect(api.output()).not.toContain(session);
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
