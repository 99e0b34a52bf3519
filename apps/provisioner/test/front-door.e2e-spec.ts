import type { NestExpressApplication } from '@nestjs/platform-express';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answerWithoutBody, portOf } from '../../../test/support/incomplete-body';
import { provisionerTestSettings, queueEnv } from '../../../test/support/provisioner-app';
import { writeRoutes } from '../../../test/support/write-routes';
import { createProvisionerApiApp } from '../src/http-app';

/** The queue dashboard's own JSON API takes bodies too (bull-board's routes, below its mount). */
const DASHBOARD_WRITES = [
  { method: 'POST', path: '/admin/queues/api/queues/imports/add' },
  { method: 'PUT', path: '/admin/queues/api/queues/pause' },
];

describe('provisioner front door', () => {
  let api: NestExpressApplication;
  let port: number;

  beforeAll(async () => {
    const settings = provisionerTestSettings({
      ...(await queueEnv()),
      STORAGE_ROOT: mkdtempSync(join(tmpdir(), 'provisioner-front-door-')),
    });
    api = await createProvisionerApiApp(settings);
    await api.init();
    port = await portOf(api.getHttpServer());
  });
  afterAll(() => api.close());

  it('refuses every route that takes a body before reading it, without a key or with a wrong one', async () => {
    const routes = [...writeRoutes(api), ...DASHBOARD_WRITES];
    expect(routes.length).toBeGreaterThanOrEqual(3);
    const seen: { route: string; key: string; status: number }[] = [];
    for (const { method, path } of routes) {
      for (const [key, headers] of [
        ['none', {}],
        ['wrong', { 'X-API-Key': 'not-a-key-of-this-provisioner' }],
      ] as const) {
        const res = await answerWithoutBody(port, { method, path, headers });
        seen.push({ route: `${method} ${path}`, key, status: res.status });
      }
    }
    expect(seen).toEqual(seen.map((answer) => ({ ...answer, status: 401 })));
  });
});
