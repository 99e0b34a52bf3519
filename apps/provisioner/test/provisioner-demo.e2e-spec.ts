import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import {
  queueEnv,
  startProvisionerApps,
  ProvisionerTestApps,
  TEST_WRITE_KEY,
} from '../../../test/support/provisioner-app';
import { tempDir } from './support/dropzone-fixture';
import { waitForImport } from './support/provisioner-e2e';

jest.setTimeout(120_000);

const REPO = resolve(__dirname, '../../..');

/** The CLI exactly as `npm start` runs it (from source here), with only SOURCES set. */
async function runCli(sources: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      '-r',
      'ts-node/register',
      '-r',
      'tsconfig-paths/register',
      'apps/provisioner/src/demo/demo-dropzone.cli.ts',
      '--json',
    ],
    {
      cwd: REPO,
      env: { PATH: process.env.PATH, SOURCES: sources, TS_NODE_TRANSPILE_ONLY: '1' },
    },
  );
  return stdout.trim().split('\n');
}

describe('the demo drop zone of npm start', () => {
  let apps: ProvisionerTestApps;
  let root: string;
  const get = (path: string) =>
    request(apps.api.getHttpServer()).get(path).set('X-API-Key', TEST_WRITE_KEY);

  beforeAll(async () => {
    root = join(tempDir('e2e-demo'), 'dropzone');
    const sources = JSON.stringify([{ name: 'dropzone', type: 'dropzone', root }]);
    const first = await runCli(sources);
    expect(first[0]).toContain(`Demo drop zone created in ${root}`);
    expect(JSON.parse(first[first.length - 1])).toEqual({
      demo: { submissions: 2, datasets: 4 },
    });
    const second = await runCli(sources);
    expect(second[0]).toContain('nothing changed');
    expect(JSON.parse(second[second.length - 1])).toEqual({
      demo: { submissions: 0, datasets: 0 },
    });
    apps = await startProvisionerApps({
      ...(await queueEnv()),
      SOURCES: sources,
      STORAGE_ROOT: join(root, '../storage'),
    });
  });

  afterAll(async () => {
    await apps?.close();
  });

  it('lists one eligible and one not yet eligible submission', async () => {
    const res = await get('/submissions/dropzone').expect(200);
    expect(res.body.items).toEqual([
      expect.objectContaining({ ref: 'ELX_LU_SUB-1', eligible: true, dataset_count: 3 }),
      expect.objectContaining({ ref: 'ELX_LU_SUB-2', eligible: false, dataset_count: 1 }),
    ]);
  });

  it('diffs two ready datasets and one still uploading, imports the ready ones cleanly', async () => {
    const diff = await get('/datasets/dropzone/diff').expect(200);
    expect(diff.body.items).toEqual([
      expect.objectContaining({ dataset_id: 'ELX-DS-0001', ready: true, file_count: 3 }),
      expect.objectContaining({ dataset_id: 'ELX-DS-0002', ready: true, file_count: 2 }),
      expect.objectContaining({
        dataset_id: 'ELX-DS-0003',
        ready: false,
        reason: 'marker_missing',
      }),
    ]);
    for (const id of ['ELX-DS-0001', 'ELX-DS-0002']) {
      const res = await request(apps.api.getHttpServer())
        .post('/datasets/dropzone/import')
        .set('X-API-Key', TEST_WRITE_KEY)
        .send({ dataset_id: id })
        .expect(202);
      // Where the queued import is followed.
      expect(res.headers.location).toBe(`/imports/${res.body.id}`);
      const done = await waitForImport(apps.api, res.body.id);
      expect(done).toMatchObject({ state: 'imported', error: null });
      expect(done.path).toBe(`projects/PD-OMICS/ELX_LU_SUB-1/data/raw/${id}`);
    }
    const after = await get('/datasets/dropzone/diff').expect(200);
    expect(after.body.items.map((d: { dataset_id: string }) => d.dataset_id)).toEqual([
      'ELX-DS-0003',
    ]);
    expect(readdirSync(join(root, '../storage/projects/PD-OMICS/ELX_LU_SUB-1/data/raw'))).toEqual([
      'ELX-DS-0001',
      'ELX-DS-0002',
    ]);
  });
});
