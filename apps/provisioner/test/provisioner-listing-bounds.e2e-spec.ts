import { join } from 'node:path';
import request from 'supertest';
import {
  queueEnv,
  startProvisionerApps,
  ProvisionerTestApps,
  TEST_READ_KEY,
  TEST_WRITE_KEY,
} from '../../../test/support/provisioner-app';
import { DropzoneFixture, tempDir } from './support/dropzone-fixture';

jest.setTimeout(60_000);

/**
 * What a submission may name and what a listing answers (issue 30, item 5): a submission.json
 * naming more datasets than SOURCE_SUBMISSION_MAX_DATASETS is refused, saying why; the source
 * listings are paged (page/per_page), answering whole by default up to 1,000 items.
 */
describe('source listings: bounded submissions, paged answers', () => {
  let apps: ProvisionerTestApps;
  const get = (path: string) =>
    request(apps.api.getHttpServer()).get(path).set('X-API-Key', TEST_READ_KEY);
  const ids = Array.from({ length: 5 }, (_, i) => `DS-${i}`);

  beforeAll(async () => {
    const base = tempDir('listing-bounds');
    const dropzone = new DropzoneFixture(join(base, 'dropzone'));
    dropzone.submission('SUB-OK', { project: 'P1', datasets: ids });
    for (const id of ids)
      dropzone.dataset(id, { submission: 'SUB-OK', files: { 'a.txt': id }, ready: true });
    dropzone.submission('SUB-MANY', {
      project: 'P1',
      datasets: Array.from({ length: 6 }, (_, i) => `DS-MANY-${i}`),
    });
    dropzone.dataset('DS-MANY-0', { submission: 'SUB-MANY', files: { 'a.txt': 'x' }, ready: true });
    apps = await startProvisionerApps({
      ...(await queueEnv()),
      STORAGE_ROOT: join(base, 'storage'),
      SOURCE_SUBMISSION_MAX_DATASETS: '5',
      SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: dropzone.root }]),
    });
  });

  afterAll(() => apps?.close());

  it('leaves out a submission naming more datasets than allowed, and says why on import', async () => {
    const listed = await get('/submissions/dropzone');
    expect(listed.body).toMatchObject({ count: 1, items: [{ ref: 'SUB-OK', dataset_count: 5 }] });
    const res = await request(apps.api.getHttpServer())
      .post('/submissions/dropzone/import')
      .set('X-API-Key', TEST_WRITE_KEY)
      .send({ submission: 'SUB-MANY' });
    expect(res.status).toBe(409);
    expect(res.body.more).toMatchObject({ reason: 'metadata_refused' });
    expect(JSON.stringify(res.body)).toContain(
      'names 6 datasets, over the limit of 5 (SOURCE_SUBMISSION_MAX_DATASETS)',
    );
  });

  it.each([
    '/submissions/dropzone',
    '/submissions/dropzone/diff',
    '/datasets/dropzone',
    '/datasets/dropzone/diff',
  ])(
    '%s answers whole by default and a page at a time when asked, with the count of all',
    async (path) => {
      const whole = await get(path);
      expect(whole.status).toBe(200);
      expect(Object.keys(whole.body).sort()).toEqual(['count', 'items']);
      const all = whole.body.items as unknown[];
      expect(whole.body.count).toBe(all.length);
      const pages: unknown[] = [];
      for (let page = 1; page <= 3; page++) {
        const res = await get(`${path}?per_page=2&page=${page}`);
        expect(res.body.count).toBe(all.length);
        pages.push(...res.body.items);
      }
      expect(pages).toEqual(all);
      expect((await get(`${path}?per_page=1001`)).status).toBe(400);
      expect((await get(`${path}?page=0`)).status).toBe(400);
    },
  );
});
