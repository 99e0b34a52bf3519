import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import request from 'supertest';
import {
  startProvisionerApps,
  ProvisionerTestApps,
  TEST_READ_KEY,
  TEST_WRITE_KEY,
} from '../../../test/support/provisioner-app';
import { IMPORTS_QUEUE, SYNC_SCHEDULER_ID } from '../src/imports/import.queue';
import type { ImportRecord } from '../src/imports/import-record';
import { ImportSyncService } from '../src/import-pipeline/import-sync.service';
import { digest, DropzoneFixture, tempDir } from './support/dropzone-fixture';
import { until } from '../../../test/support/wait';
import { dropzoneEnv, IMPORT_WAIT_MS, waitForImport } from './support/provisioner-e2e';

const FILES = {
  'reads/sample_R1.fastq': 'ACGT'.repeat(5000),
  'README.txt': 'about this dataset\n',
  'empty.dat': '',
};

jest.setTimeout(30_000);

describe('provisioner with a dropzone source (API + worker, Redis, real filesystem)', () => {
  let apps: ProvisionerTestApps;
  let dropzone: DropzoneFixture;
  let storageRoot: string;
  const http = () => request(apps.api.getHttpServer());
  const get = (path: string) => http().get(path).set('X-API-Key', TEST_READ_KEY);
  const post = (path: string, body: unknown) =>
    http()
      .post(path)
      .set('X-API-Key', TEST_WRITE_KEY)
      .send(body as object);
  const stored = (path: string) => join(storageRoot, path);

  beforeAll(async () => {
    const base = tempDir('e2e-dropzone');
    dropzone = new DropzoneFixture(join(base, 'dropzone'));
    storageRoot = join(base, 'storage');
    dropzone
      .submission('SUB-1', {
        project: 'PRJ1',
        datasets: [
          'DS-GOOD',
          'DS-TWICE',
          'DS-MISSING',
          'DS-NOTYET',
          'DS-SUM',
          'DS-EXTRA',
          'DS-LINK',
          'DS-FIFO',
          'DS-NAMES',
          'DS-RESERVED',
          'DS-DOTDOT',
          'DS-REDO',
        ],
      })
      .submission('SUB-2', { status: 'data_upload', project: 'PRJ1', datasets: ['DS-WAIT'] })
      .submission('SUB-3', { project: 'PRJ2', datasets: [] });
    for (const id of ['DS-GOOD', 'DS-TWICE', 'DS-REDO'])
      dropzone.dataset(id, { submission: 'SUB-1', files: FILES, manifests: ['sha256', 'md5'] });
    dropzone.dataset('DS-WAIT', { submission: 'SUB-2', files: FILES });
    dropzone.dataset('DS-NOTYET', { submission: 'SUB-1', files: FILES, ready: false });
    dropzone.dataset('DS-MISSING', {
      submission: 'SUB-1',
      files: { 'a.txt': 'a' },
      manifestText: {
        sha256: `${digest('sha256', 'a')}  a.txt\n${digest('sha256', 'b')}  b.txt\n`,
      },
    });
    dropzone.dataset('DS-SUM', {
      submission: 'SUB-1',
      files: { 'a.txt': 'a', 'b.txt': 'b' },
      manifestText: {
        sha256: `${digest('sha256', 'a')}  a.txt\n${digest('sha256', 'not b')}  b.txt\n`,
      },
    });
    dropzone.dataset('DS-EXTRA', { submission: 'SUB-1', files: { 'a.txt': 'a' } });
    writeFileSync(join(dropzone.datasetDir('DS-EXTRA'), 'payload/stowaway.bin'), 'x');
    dropzone.dataset('DS-LINK', { submission: 'SUB-1', files: { 'a.txt': 'a' } });
    symlinkSync('/etc/hostname', join(dropzone.datasetDir('DS-LINK'), 'payload/link'));
    dropzone.dataset('DS-FIFO', { submission: 'SUB-1', files: { 'a.txt': 'a' } });
    execFileSync('mkfifo', [join(dropzone.datasetDir('DS-FIFO'), 'payload/pipe')]);
    dropzone.dataset('DS-NAMES', { submission: 'SUB-1', files: { 'a.txt': 'a' } });
    writeFileSync(join(dropzone.datasetDir('DS-NAMES'), 'payload/carriage\rreturn'), '');
    writeFileSync(
      Buffer.concat([
        Buffer.from(join(dropzone.datasetDir('DS-NAMES'), 'payload/latin1-')),
        Buffer.from([0xe9]),
      ]),
      '',
    );
    dropzone.dataset('DS-RESERVED', {
      submission: 'SUB-1',
      files: { 'a.txt': 'a', '.provisioner/provenance.json': '{}' },
    });
    dropzone.dataset('DS-DOTDOT', {
      submission: 'SUB-1',
      files: { 'a.txt': 'a' },
      manifestText: {
        sha256: `${digest('sha256', 'a')}  a.txt\n${digest('sha256', 'x')}  ../DS-GOOD/dataset.json\n`,
      },
    });
    apps = await startProvisionerApps(
      await dropzoneEnv(dropzone, storageRoot, { IMPORT_MAX_ATTEMPTS: '2' }),
    );
  });

  afterAll(async () => {
    await apps?.close();
  });

  it('needs a key, and a write key to import', async () => {
    expect((await http().get('/submissions/dropzone')).status).toBe(401);
    const readOnly = await http()
      .post('/datasets/dropzone/import')
      .set('X-API-Key', TEST_READ_KEY)
      .send({ dataset_id: 'DS-GOOD' });
    expect(readOnly.status).toBe(403);
  });

  it('answers 404 for an unknown source on every route', async () => {
    for (const path of [
      '/submissions/nope',
      '/submissions/nope/diff',
      '/datasets/nope',
      '/datasets/nope/diff',
    ]) {
      const res = await get(path);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ status: 'Error', description: 'Unknown source: nope' });
    }
    expect((await post('/datasets/nope/import', { dataset_id: 'DS-GOOD' })).status).toBe(404);
    expect((await post('/submissions/nope/import', { submission: 'SUB-1' })).status).toBe(404);
  });

  it('refuses bad bodies with 400 and queues nothing', async () => {
    const bad: [string, unknown][] = [
      ['/datasets/dropzone/import', { dataset_id: '../x' }],
      ['/datasets/dropzone/import', { dataset_id: '' }],
      ['/datasets/dropzone/import', { dataset_id: 'x'.repeat(300) }],
      ['/datasets/dropzone/import', { dataset_id: '..' }],
      ['/datasets/dropzone/import', { dataset_id: 7 }],
      ['/datasets/dropzone/import', {}],
      ['/datasets/dropzone/import', { dataset_id: 'DS-GOOD', force: true }],
      ['/submissions/dropzone/import', { submission: '../../etc' }],
      ['/submissions/dropzone/import', { submission: 'SUB-1', extra: 1 }],
      ['/submissions/dropzone/import', {}],
    ];
    for (const [path, body] of bad) {
      const res = await post(path, body);
      expect({ path, body, status: res.status }).toEqual({ path, body, status: 400 });
      expect(res.body.status).toBe('Error');
    }
    const queue = apps.api.get<Queue>(getQueueToken(IMPORTS_QUEUE));
    expect(await queue.count()).toBe(0);
    expect((await get('/imports')).body).toMatchObject({ items: [], count: 0 });
  });

  it('lists every submission with eligibility, and diffs against storage before and after an import', async () => {
    const list = await get('/submissions/dropzone');
    expect(list.status).toBe(200);
    expect(list.body.count).toBe(3);
    expect(list.body.items[0]).toEqual({
      ref: 'SUB-1',
      title: 'Submission SUB-1',
      status: 'completed',
      project: 'PRJ1',
      eligible: true,
      dataset_count: 12,
      imported: false,
      collection_path: 'projects/PRJ1/SUB-1',
    });
    expect(list.body.items[1]).toMatchObject({ ref: 'SUB-2', eligible: false });
    expect(
      (await get('/submissions/dropzone/diff')).body.items.map((s: { ref: string }) => s.ref),
    ).toEqual(['SUB-1', 'SUB-3']);

    expect((await post('/submissions/dropzone/import', { submission: 'SUB-2' })).status).toBe(409);
    expect((await post('/submissions/dropzone/import', { submission: 'SUB-404' })).status).toBe(
      404,
    );
    const queued = await post('/submissions/dropzone/import', { submission: 'SUB-3' });
    expect(queued.status).toBe(202);
    expect(queued.body).toMatchObject({
      id: 'dropzone-submission-SUB-3',
      kind: 'submission',
      source: 'dropzone',
      key: 'SUB-3',
      path: 'projects/PRJ2/SUB-3',
    });
    expect(['queued', 'running', 'imported']).toContain(queued.body.state);
    const done = await waitForImport(apps.api, queued.body.id);
    expect(done.state).toBe('imported');
    const document = JSON.parse(
      readFileSync(stored('projects/PRJ2/SUB-3/submission.json'), 'utf8'),
    );
    expect(document).toMatchObject({
      ref: 'SUB-3',
      source: { name: 'dropzone' },
      submission: { ref: 'SUB-3', project: 'PRJ2' },
    });
    expect(statSync(stored('projects/PRJ2/SUB-3/data/raw')).isDirectory()).toBe(true);

    const again = await post('/submissions/dropzone/import', { submission: 'SUB-3' });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(done.id);
    expect(again.body.created_at).toBe(done.created_at);
    expect(
      (await get('/submissions/dropzone/diff')).body.items.map((s: { ref: string }) => s.ref),
    ).toEqual(['SUB-1']);
  });

  it('lists datasets, filters by submission, and 404s an unknown submission', async () => {
    const all = await get('/datasets/dropzone');
    expect(all.body.count).toBe(13);
    const good = all.body.items.find((d: { dataset_id: string }) => d.dataset_id === 'DS-GOOD');
    expect(good).toEqual({
      dataset_id: 'DS-GOOD',
      submission: 'SUB-1',
      title: 'Dataset DS-GOOD',
      file_count: 3,
      byte_size: 20_019,
      ready: true,
      imported: false,
      path: 'projects/PRJ1/SUB-1/data/raw/DS-GOOD',
      catalog_accession: null,
    });
    const sub2 = await get('/datasets/dropzone?submission=SUB-2');
    expect(sub2.body).toMatchObject({ count: 1, items: [{ dataset_id: 'DS-WAIT', ready: false }] });
    expect((await get('/datasets/dropzone?submission=SUB-404')).status).toBe(404);
  });

  it('diff lists only datasets of eligible submissions, with why the unready ones are not ready', async () => {
    const diff = await get('/datasets/dropzone/diff');
    const byId = Object.fromEntries(
      diff.body.items.map((d: { dataset_id: string }) => [d.dataset_id, d]),
    );
    expect(byId['DS-WAIT']).toBeUndefined();
    expect(byId['DS-GOOD']).toMatchObject({ ready: true, reason: null });
    expect(byId['DS-NOTYET']).toMatchObject({ ready: false, reason: 'marker_missing' });
    expect(byId['DS-MISSING']).toMatchObject({ ready: false, reason: 'files_missing' });
    expect(byId['DS-MISSING'].reason_detail).toContain('b.txt');
  });

  it('imports a good dataset: verified checksums, provenance, read-only tree; a repeat POST returns the same record', async () => {
    const res = await post('/datasets/dropzone/import', { dataset_id: 'DS-GOOD' });
    expect(res.status).toBe(202);
    const record = await waitForImport(apps.api, res.body.id);
    expect(record).toMatchObject({
      state: 'imported',
      attempts: 1,
      error: null,
      path: 'projects/PRJ1/SUB-1/data/raw/DS-GOOD',
      progress: { files_done: 3, files_total: 3, bytes_done: 20_019, bytes_total: 20_019 },
      // No CATALOG_URL / CATALOG_API_KEY: registration in the catalog is off.
      catalog: { state: 'off', accession: null, error: null },
    });
    expect(record.finished_at).not.toBeNull();
    const dir = stored(record.path);
    for (const [path, content] of Object.entries(FILES)) {
      expect(digest('sha256', readFileSync(join(dir, path)))).toBe(digest('sha256', content));
      expect(statSync(join(dir, path)).mode & 0o222).toBe(0);
    }
    expect(statSync(dir).mode & 0o222).toBe(0);
    expect(readFileSync(join(dir, '.provisioner/manifest-sha256.txt'), 'utf8')).toContain(
      `${digest('sha256', FILES['README.txt'])}  README.txt`,
    );
    const provenance = JSON.parse(readFileSync(join(dir, '.provisioner/provenance.json'), 'utf8'));
    expect(provenance).toMatchObject({
      import: { id: record.id, attempt: 1 },
      verification: { result: 'passed', manifests: ['sha256', 'md5'] },
      totals: { files: 3 },
    });
    expect(
      JSON.parse(readFileSync(stored('projects/PRJ1/SUB-1/submission.json'), 'utf8')).ref,
    ).toBe('SUB-1');

    const again = await post('/datasets/dropzone/import', { dataset_id: 'DS-GOOD' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      id: record.id,
      state: 'imported',
      created_at: record.created_at,
    });
    const diff = await get('/datasets/dropzone/diff');
    expect(diff.body.items.map((d: { dataset_id: string }) => d.dataset_id)).not.toContain(
      'DS-GOOD',
    );
    expect(
      (await get('/datasets/dropzone?submission=SUB-1')).body.items.find(
        (d: { dataset_id: string }) => d.dataset_id === 'DS-GOOD',
      ).imported,
    ).toBe(true);
  });

  it('two concurrent POSTs make one import and one copy', async () => {
    const [a, b] = await Promise.all([
      post('/datasets/dropzone/import', { dataset_id: 'DS-TWICE' }),
      post('/datasets/dropzone/import', { dataset_id: 'DS-TWICE' }),
    ]);
    expect([a.status, b.status].every((s) => s === 202 || s === 409)).toBe(true);
    const ids = [a, b].map((r) => (r.status === 202 ? r.body.id : r.body.more.import.id));
    expect(ids[0]).toBe(ids[1]);
    const record = await waitForImport(apps.api, ids[0]);
    expect(record).toMatchObject({ state: 'imported', attempts: 1 });
    expect(
      readdirSync(stored('projects/PRJ1/SUB-1/data/raw')).filter((n) => n === 'DS-TWICE'),
    ).toHaveLength(1);
    expect(readdirSync(join(storageRoot, '.staging'))).toEqual([]);
    const list = await get('/imports?source=dropzone');
    expect(list.body.items.filter((r: ImportRecord) => r.key === 'DS-TWICE')).toHaveLength(1);
  });

  it('refuses a dataset that is not ready with 409 and the reason', async () => {
    const res = await post('/datasets/dropzone/import', { dataset_id: 'DS-MISSING' });
    expect(res.status).toBe(409);
    expect(res.body.more).toMatchObject({ reason: 'files_missing' });
    expect(
      (await post('/datasets/dropzone/import', { dataset_id: 'DS-WAIT' })).body.more,
    ).toMatchObject({ reason: 'submission_not_eligible' });
    expect((await post('/datasets/dropzone/import', { dataset_id: 'DS-404' })).status).toBe(404);
  });

  it.each([
    ['DS-SUM', 'checksum_mismatch', ['checksum_mismatch:b.txt']],
    ['DS-EXTRA', 'preflight_failed', ['extra_file:stowaway.bin']],
    ['DS-LINK', 'preflight_failed', ['symlink:link']],
    ['DS-FIFO', 'preflight_failed', ['fifo:pipe']],
    [
      'DS-NAMES',
      'preflight_failed',
      ['control_character:carriage\\x0dreturn', 'invalid_utf8:latin1-\\xe9'],
    ],
    [
      'DS-RESERVED',
      'preflight_failed',
      ['manifest_reserved_name:.provisioner/provenance.json', 'reserved_name:.provisioner'],
    ],
    ['DS-DOTDOT', 'preflight_failed', ['manifest_dot_segment:../DS-GOOD/dataset.json']],
  ])('rejects %s (%s) with the full list, once, publishing nothing', async (id, code, problems) => {
    const res = await post('/datasets/dropzone/import', { dataset_id: id });
    expect(res.status).toBe(202);
    const record = await waitForImport(apps.api, res.body.id);
    if (record.state !== 'rejected')
      throw new Error(`unexpected record: ${JSON.stringify(record)}`);
    expect(record).toMatchObject({ state: 'rejected', attempts: 1, error: { code } });
    const found = (record.error!.details as { code: string; path: string }[])
      .map((d) => `${d.code}:${d.path}`)
      .sort();
    expect(found).toEqual(problems);
    expect(existsSync(stored(`projects/PRJ1/SUB-1/data/raw/${id}`))).toBe(false);
    expect(readdirSync(join(storageRoot, '.staging'))).toEqual([]);
  });

  it('pages import records newest first and filters by state and source', async () => {
    const rejected = await get('/imports?state=rejected&source=dropzone&per_page=3&page=1');
    expect(rejected.body).toMatchObject({ count: 7, page: 1, per_page: 3 });
    expect(rejected.body.items).toHaveLength(3);
    const createdAt = rejected.body.items.map((r: ImportRecord) => r.created_at);
    expect([...createdAt].sort().reverse()).toEqual(createdAt);
    expect((await get('/imports?state=rejected&per_page=3&page=3')).body.items).toHaveLength(1);
    expect((await get('/imports?source=other')).body.count).toBe(0);
    expect((await get('/imports?state=bogus')).status).toBe(400);
    expect((await get('/imports?per_page=0')).status).toBe(400);
    expect((await get('/imports/nope-dataset-x')).status).toBe(404);
  });

  it('imports again a dataset that was removed from storage, despite the deterministic job id', async () => {
    const first = await waitForImport(
      apps.api,
      (await post('/datasets/dropzone/import', { dataset_id: 'DS-REDO' })).body.id,
    );
    expect(first.state).toBe('imported');
    const dir = stored(first.path);
    chmodSync(dir, 0o755);
    for (const sub of ['reads', '.provisioner']) chmodSync(join(dir, sub), 0o755);
    rmSync(dir, { recursive: true });
    expect(
      (await get('/datasets/dropzone/diff')).body.items.map(
        (d: { dataset_id: string }) => d.dataset_id,
      ),
    ).toContain('DS-REDO');
    const res = await post('/datasets/dropzone/import', { dataset_id: 'DS-REDO' });
    expect(res.status).toBe(202);
    const second = await waitForImport(apps.api, res.body.id);
    expect(second).toMatchObject({ id: first.id, state: 'imported' });
    expect(existsSync(join(dir, '.provisioner/provenance.json'))).toBe(true);
  });

  it('the sync job imports every eligible submission and ready dataset, and a second run does nothing', async () => {
    dropzone.submission('SUB-4', { project: 'PRJ3', datasets: ['DS-SYNC'] });
    dropzone.dataset('DS-SYNC', { submission: 'SUB-4', files: { 'x.txt': 'x' } });
    const sync = apps.worker.get(ImportSyncService);
    const first = await sync.run();
    // SUB-4 is the only eligible submission without a collection; DS-SYNC the only ready dataset
    // neither imported nor rejected before (rejected ones wait for a human to POST again).
    expect(first.queued).toBe(2);
    expect((await waitForImport(apps.api, 'dropzone-dataset-DS-SYNC')).state).toBe('imported');
    expect((await waitForImport(apps.api, 'dropzone-submission-SUB-4')).state).toBe('imported');
    const queue = apps.api.get<Queue>(getQueueToken(IMPORTS_QUEUE));
    await waitUntilIdle(queue);
    const before = await queue.count();
    const second = await sync.run();
    await waitUntilIdle(queue);
    expect(second.queued).toBe(0);
    expect(await queue.count()).toBe(before);
    expect(await queue.getJobScheduler(SYNC_SCHEDULER_ID)).toBeFalsy();
  });

  it("the worker's import metrics count every import that ended, and the bytes and files copied", async () => {
    const records = (await get('/imports?per_page=200')).body.items as ImportRecord[];
    const ended = (state: string) => records.filter((r) => r.state === state);
    const copied = ended('imported').filter((r) => r.kind === 'dataset');
    const text = (await request(apps.worker.getHttpServer()).get('/metrics').expect(200)).text;
    const value = (name: string, label = '') =>
      Number(
        text
          .split('\n')
          .find((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && l.includes(label))
          ?.split(' ')
          .pop(),
      );
    expect(value('provisioner_imports_total', 'outcome="rejected"')).toBe(ended('rejected').length);
    expect(value('provisioner_imports_total', 'outcome="failed"')).toBe(0);
    // DS-REDO was imported twice under one record.
    expect(value('provisioner_imports_total', 'outcome="imported"')).toBe(
      ended('imported').length + 1,
    );
    expect(value('provisioner_import_duration_seconds_count', 'outcome="imported"')).toBe(
      ended('imported').length + 1,
    );
    // Every dataset import resolved, and those that copied ran every step: the steps' histogram.
    expect(value('provisioner_import_step_seconds_count', 'step="resolve"')).toBeGreaterThanOrEqual(
      copied.length,
    );
    for (const step of ['plan', 'stage', 'verify', 'flush', 'publish'])
      expect(value('provisioner_import_step_seconds_count', `step="${step}"`)).toBeGreaterThan(0);
    const sum = (pick: (r: ImportRecord) => number) => copied.reduce((n, r) => n + pick(r), 0);
    expect(value('provisioner_import_bytes_total')).toBeGreaterThanOrEqual(
      sum((r) => r.progress.bytes_done),
    );
    expect(value('provisioner_import_files_total')).toBeGreaterThanOrEqual(
      sum((r) => r.progress.files_done),
    );
    expect(sum((r) => r.progress.files_done)).toBeGreaterThan(0);
  });
});

async function waitUntilIdle(queue: Queue): Promise<void> {
  await until(
    async () =>
      (await queue.getActiveCount()) +
        (await queue.getWaitingCount()) +
        (await queue.getDelayedCount()) ===
      0,
    'the import queue to be idle',
    IMPORT_WAIT_MS,
    50,
  );
}
