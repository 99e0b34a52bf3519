import { readdirSync, rmSync, statSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import request from 'supertest';
import { DropzoneFixture, tempDir } from '../../apps/provisioner/test/support/dropzone-fixture';
import {
  ProvisionerTestApps,
  queueEnv,
  startProvisionerApps,
  TEST_READ_KEY,
  TEST_WRITE_KEY,
} from '../support/provisioner-app';
import { generateAttacks } from './support/attacks';
import { runAttacks } from './support/hostile-client';
import { listRoutes } from './support/routes';

const MAX_BODY_BYTES = 16 * 1024;
const ATTACKS = 3000;

/** Every path under a directory with its size: equal listings mean nothing was written. */
function tree(root: string, prefix = ''): string[] {
  return readdirSync(join(root, prefix), { withFileTypes: true }).flatMap((entry) => {
    const path = join(prefix, entry.name);
    return entry.isDirectory() ? [`${path}/`, ...tree(root, path)] : [`${path} ${statSync(join(root, path)).size}`];
  });
}

describe('provisioner API under hostile input', () => {
  let apps: ProvisionerTestApps;
  let port: number;
  const dropzone = tempDir('robust-dz');
  const storage = tempDir('robust-st');

  beforeAll(async () => {
    // A real, ready dataset: attacks that name it with a valid source reach the import code.
    new DropzoneFixture(dropzone)
      .submission('SUB-ROBUST', { datasets: ['DS-ROBUST-1'] })
      .dataset('DS-ROBUST-1', { submission: 'SUB-ROBUST', files: { 'a.txt': 'payload\n' } });
    apps = await startProvisionerApps({
      ...(await queueEnv()),
      STORAGE_ROOT: storage,
      SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: dropzone }]),
      MAX_BODY_BYTES: String(MAX_BODY_BYTES),
      // One attacking address: the failure limit is out of its reach so that attacks keep
      // reaching the handlers (auth-guessing.robust-spec.ts attacks the limit).
      AUTH_FAILURE_LIMIT: '1000000',
    });
    const server = apps.api.getHttpServer() as Server;
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await apps.close();
    rmSync(dropzone, { recursive: true, force: true });
    rmSync(storage, { recursive: true, force: true });
  });

  it('answers every generated request on every route without a 500, errors in the envelope, nothing imported', async () => {
    const routes = listRoutes(apps.api);
    expect(routes.length).toBeGreaterThanOrEqual(8);
    const attacks = generateAttacks(routes, {
      seed: Number(process.env.ROBUSTNESS_SEED ?? 20261122),
      count: ATTACKS,
      keys: {
        write: TEST_WRITE_KEY,
        read: TEST_READ_KEY,
        empty: '',
        wrong: 'w'.repeat(44),
        long: 'k'.repeat(8192),
        sql: "' OR '1'='1",
      },
      knownParams: ['submission', 'state', 'source', 'page', 'limit', 'cursor', 'API_KEY'],
      maxBodyBytes: MAX_BODY_BYTES,
      validSegments: { srcsys: ['dropzone'] },
    });
    const before = tree(storage);

    const run = await runAttacks(port, attacks);

    process.stdout.write(
      `provisioner API: ${run.tried} hostile requests over ${routes.length} routes ` +
        `(${routes.map((r) => `${r.method} ${r.path}`).join(', ')}); statuses ${JSON.stringify(run.byStatus)}\n`,
    );
    expect(run.problems.slice(0, 30)).toEqual([]);
    expect(run.tried).toBe(ATTACKS);
    expect(tree(storage)).toEqual(before);
    const imports = await request(apps.api.getHttpServer()).get('/imports').set('X-API-Key', TEST_WRITE_KEY);
    expect(imports.status).toBe(200);
    expect(imports.body.items).toEqual([]);
  });
});
