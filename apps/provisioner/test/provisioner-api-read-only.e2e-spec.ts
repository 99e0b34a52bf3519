import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { provisionerTestSettings, TEST_WRITE_KEY } from '../../../test/support/provisioner-app';
import { createProvisionerApiApp } from '../src/http-app';
import { dropzoneEnv } from './support/provisioner-e2e';
import { DropzoneFixture, tempDir } from './support/dropzone-fixture';

/** Every path under root with its mtime and size: any write shows up as a difference. */
function snapshot(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const stats = statSync(path);
      out.push(`${path} ${stats.mtimeMs} ${stats.size} ${stats.mode}`);
      if (stats.isDirectory()) walk(path);
    }
  };
  walk(root);
  return out.sort();
}

/**
 * The Kubernetes manifests mount storage read-only into the API pod: every route, imports
 * included, must work without writing there (the worker does the writing).
 */
describe('the provisioner API process never writes to storage', () => {
  let api: NestExpressApplication;

  afterAll(async () => {
    await api?.close();
  });

  it('answers every route, POSTs included, leaving storage byte for byte as it was', async () => {
    const base = tempDir('e2e-api-read-only');
    const dropzone = new DropzoneFixture(join(base, 'dropzone'));
    const storageRoot = join(base, 'storage');
    dropzone
      .submission('SUB-1', { project: 'PRJ1', datasets: ['DS-1'] })
      .submission('SUB-2', { project: 'PRJ1', datasets: ['DS-2'] });
    dropzone.dataset('DS-1', { submission: 'SUB-1', files: { 'a.txt': 'a' } });
    dropzone.dataset('DS-2', { submission: 'SUB-2', files: { 'b.txt': 'b' } });
    // SUB-1's collection exists already (imported earlier); SUB-2's does not.
    mkdirSync(join(storageRoot, 'projects/PRJ1/SUB-1/data/raw'), { recursive: true });
    const before = snapshot(storageRoot);

    api = await createProvisionerApiApp(
      provisionerTestSettings(await dropzoneEnv(dropzone, storageRoot)),
    );
    await api.init();
    const http = () => request(api.getHttpServer());
    for (const path of [
      '/submissions/dropzone',
      '/submissions/dropzone/diff',
      '/datasets/dropzone',
      '/datasets/dropzone/diff',
      '/imports',
    ])
      await http().get(path).set('X-API-Key', TEST_WRITE_KEY).expect(200);
    const posts: [string, object][] = [
      ['/submissions/dropzone/import', { submission: 'SUB-2' }],
      ['/submissions/dropzone/import', { submission: 'SUB-1' }],
      ['/datasets/dropzone/import', { dataset_id: 'DS-1' }],
      ['/datasets/dropzone/import', { dataset_id: 'DS-2' }],
    ];
    const statuses: number[] = [];
    for (const [path, body] of posts)
      statuses.push((await http().post(path).set('X-API-Key', TEST_WRITE_KEY).send(body)).status);
    // Queued (no worker runs here), or already imported for SUB-1.
    expect(statuses).toEqual([202, 200, 202, 202]);
    await http().get('/imports/dropzone-dataset-DS-1').set('X-API-Key', TEST_WRITE_KEY).expect(200);
    expect(snapshot(storageRoot)).toEqual(before);
  });
});
