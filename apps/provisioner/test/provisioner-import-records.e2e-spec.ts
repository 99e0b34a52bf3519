import { join } from 'node:path';
import { getQueueToken } from '@nestjs/bullmq';
import type { Job, Queue } from 'bullmq';
import request from 'supertest';
import {
  QueueBackendChoice,
  queueEnv,
  startProvisionerApps,
  ProvisionerTestApps,
  TEST_READ_KEY,
  TEST_WRITE_KEY,
} from '../../../test/support/provisioner-app';
import { testServices } from '../../../test/support/test-services';
import { until } from '../../../test/support/wait';
import type { ImportRecord, ImportState } from '../src/imports/import-record';
import { importRetryPreset, IMPORTS_QUEUE } from '../src/imports/import.queue';
import { DropzoneFixture, tempDir } from './support/dropzone-fixture';
import { waitForImport } from './support/provisioner-e2e';

jest.setTimeout(60_000);

const backends: QueueBackendChoice[] = testServices().redisUrl
  ? ['redis', 'postgres']
  : ['postgres'];

interface Page {
  items: ImportRecord[];
  count: number;
  page: number;
  per_page: number;
}

/** The contract's order: newest first by created_at, then by id, both descending. */
function newestFirst(records: ImportRecord[]): ImportRecord[] {
  return [...records].sort((a, b) =>
    a.created_at !== b.created_at
      ? a.created_at < b.created_at
        ? 1
        : -1
      : a.id < b.id
        ? 1
        : a.id > b.id
          ? -1
          : 0,
  );
}

/**
 * GET /imports pages in the queue's store (issue 14, item 6), on both queue backends: every
 * page and filter agrees with the records read one by one, sorted as the contract says.
 */
describe.each(backends)('GET /imports on the %s backend', (backend) => {
  let apps: ProvisionerTestApps;
  let dropzone: DropzoneFixture;
  const ids: string[] = [];
  const http = () => request(apps.api.getHttpServer());
  const get = (path: string) => http().get(path).set('X-API-Key', TEST_READ_KEY);
  const queue = () => apps.api.get<Queue>(getQueueToken(IMPORTS_QUEUE));
  const list = async (query: string): Promise<Page> => {
    const res = await get(`/imports${query}`);
    expect(res.status).toBe(200);
    return res.body as Page;
  };
  const one = async (id: string): Promise<ImportRecord> => (await get(`/imports/${id}`)).body;
  /** A job added behind the API's back (the queue dashboard, an older version of the app). */
  const addDirectly = (source: string, key: string) =>
    queue().add(
      'dataset',
      { source, key, path: `projects/P/S/data/raw/${key}` },
      {
        jobId: `${source}-dataset-${key}`,
        ...importRetryPreset(1),
      },
    );

  beforeAll(async () => {
    const base = tempDir('records');
    dropzone = new DropzoneFixture(join(base, 'dropzone'));
    const datasets = Array.from({ length: 6 }, (_, i) => `DS-${i}`);
    dropzone.submission('SUB-1', { project: 'P1', datasets });
    for (const id of datasets)
      dropzone.dataset(id, { submission: 'SUB-1', files: { 'a.txt': id }, ready: true });
    apps = await startProvisionerApps({
      ...(await queueEnv(backend)),
      STORAGE_ROOT: join(base, 'storage'),
      IMPORT_MAX_ATTEMPTS: '1',
      SOURCES: JSON.stringify([
        { name: 'dropzone', type: 'dropzone', root: dropzone.root },
        // Never answers: its imports fail (transiently, and with one attempt, for good).
        {
          name: 'down',
          type: 'dss',
          url: 'http://127.0.0.1:9',
          api_key: 'k',
          landing_zone: base,
          timeout_ms: 200,
        },
      ]),
    });
    // Before the first listing, jobs the index never heard of: it indexes them on first use.
    for (let i = 0; i < 3; i++) ids.push((await addDirectly('dropzone', `GONE-${i}`)).id!);
    for (const id of ['DS-0', 'DS-1', 'DS-2', 'DS-3']) {
      const res = await http()
        .post('/datasets/dropzone/import')
        .set('X-API-Key', TEST_WRITE_KEY)
        .send({ dataset_id: id });
      expect(res.status).toBe(202);
      ids.push(res.body.id);
    }
    for (let i = 0; i < 2; i++) ids.push((await addDirectly('down', `X-${i}`)).id!);
    for (const id of ids) await waitForImport(apps.api, id);
    // Two more that stay queued.
    await queue().pause();
    for (const id of ['DS-4', 'DS-5']) {
      const res = await http()
        .post('/datasets/dropzone/import')
        .set('X-API-Key', TEST_WRITE_KEY)
        .send({ dataset_id: id });
      ids.push(res.body.id);
    }
  });

  afterAll(async () => {
    await queue()?.resume();
    await apps?.close();
  });

  it('pages every record newest first, agreeing with the records read one by one', async () => {
    const all = newestFirst(await Promise.all(ids.map(one)));
    expect(all.map((r) => r.state).sort()).toEqual(
      ['failed', 'failed', 'imported', 'imported', 'imported', 'imported', 'queued', 'queued']
        .concat(['rejected', 'rejected', 'rejected'])
        .sort(),
    );
    const seen: ImportRecord[] = [];
    for (let page = 1; page <= 4; page++) {
      const body = await list(`?per_page=3&page=${page}`);
      expect(body).toMatchObject({ count: all.length, page, per_page: 3 });
      seen.push(...body.items);
    }
    expect(seen.map((r) => r.id)).toEqual(all.map((r) => r.id));
    expect(seen).toEqual(all);
    expect((await list('?per_page=3&page=9')).items).toEqual([]);
  });

  it.each<[ImportState | undefined, string | undefined]>([
    ['imported', undefined],
    ['rejected', undefined],
    ['failed', undefined],
    ['queued', undefined],
    ['running', undefined],
    [undefined, 'down'],
    ['failed', 'down'],
    ['rejected', 'dropzone'],
    [undefined, 'nosuchsource'],
  ])('filters by state %s and source %s, with the count of all matches', async (state, source) => {
    const expected = newestFirst(await Promise.all(ids.map(one))).filter(
      (r) => (!state || r.state === state) && (!source || r.source === source),
    );
    const query = new URLSearchParams({
      ...(state ? { state } : {}),
      ...(source ? { source } : {}),
      per_page: '2',
    });
    const pages: ImportRecord[] = [];
    for (let page = 1; page <= Math.max(1, Math.ceil(expected.length / 2)); page++) {
      const body = await list(`?${query}&page=${page}`);
      expect(body.count).toBe(expected.length);
      pages.push(...body.items);
    }
    expect(pages.map((r) => `${r.id}:${r.state}`)).toEqual(
      expected.map((r) => `${r.id}:${r.state}`),
    );
  });

  it('follows jobs changed behind its back: removed, and retried from the dashboard', async () => {
    const rejected = (await list('?state=rejected')).items;
    const [removed, retried] = [rejected[0], rejected[1]];
    await (await queue().getJob(removed.id))!.remove();
    await ((await queue().getJob(retried.id)) as Job).retry('failed');
    const after = await list('?state=rejected');
    expect(after.items.map((r) => r.id)).toEqual(rejected.slice(2).map((r) => r.id));
    expect(after.count).toBe(rejected.length - 2);
    const all = await list('?per_page=100');
    expect(all.items.map((r) => r.id)).not.toContain(removed.id);
    expect(all.count).toBe(ids.length - 1);
    // Re-filed by the rejected listing that met it: the retried job is queued now.
    expect((await list('?state=queued')).items.map((r) => r.id)).toContain(retried.id);
  });

  it('shows a queued job as running and then imported once the worker takes it', async () => {
    const waiting = (await list('?state=queued&source=dropzone')).items.map((r) => r.id);
    expect(waiting).toContain('dropzone-dataset-DS-4');
    await queue().resume();
    await waitForImport(apps.api, 'dropzone-dataset-DS-4');
    await until(
      async () =>
        (await list('?state=queued')).items.every((r) => r.id !== 'dropzone-dataset-DS-4'),
      'DS-4 to leave the queued records',
    );
    expect((await list('?state=imported')).items.map((r) => r.id)).toContain(
      'dropzone-dataset-DS-4',
    );
  });
});
