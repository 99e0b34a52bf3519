import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import request from 'supertest';
import {
  QueueBackendChoice,
  queueEnv,
  startProvisionerApps,
  ProvisionerTestApps,
  TEST_READ_KEY,
} from '../../../test/support/provisioner-app';
import { testServices } from '../../../test/support/test-services';
import type { ImportRecord } from '../src/imports/import-record';
import { importRetryPreset, IMPORTS_QUEUE } from '../src/imports/import.queue';
import { tempDir } from './support/dropzone-fixture';
import { waitForImport } from './support/provisioner-e2e';

jest.setTimeout(60_000);

const backends: QueueBackendChoice[] = testServices().redisUrl
  ? ['redis', 'postgres']
  : ['postgres'];

/** Problems as an unbounded earlier version stored them: 5,000 with 2,000-character paths. */
const STORED_PROBLEMS = 5000;
const LONG = 'p'.repeat(2000);

/**
 * What one record and one page of GET /imports weigh (issue 30, item 2), on both queue
 * backends, whatever the job holds: a record shows at most 1,000 problems with short texts and
 * the count of the rest; a page shows 10 of each record's and the count.
 */
describe.each(backends)('import records stay bounded on the %s backend', (backend) => {
  let apps: ProvisionerTestApps;
  const queue = () => apps.api.get<Queue>(getQueueToken(IMPORTS_QUEUE));
  const get = (path: string) =>
    request(apps.api.getHttpServer()).get(path).set('X-API-Key', TEST_READ_KEY);
  const ids: string[] = [];

  beforeAll(async () => {
    const base = tempDir('record-bounds');
    apps = await startProvisionerApps({
      ...(await queueEnv(backend)),
      STORAGE_ROOT: `${base}/storage`,
      IMPORT_MAX_ATTEMPTS: '1',
      // Never answers: each import fails for good after its one attempt.
      SOURCES: JSON.stringify([
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
    for (let i = 0; i < 3; i++) {
      const job = await queue().add(
        'dataset',
        { source: 'down', key: `X-${i}`, path: `projects/P/S/data/raw/X-${i}` },
        { jobId: `down-dataset-X-${i}`, ...importRetryPreset(1) },
      );
      await waitForImport(apps.api, job.id!);
      const details = Array.from({ length: STORED_PROBLEMS }, (_, n) => ({
        code: 'checksum_mismatch',
        path: `${LONG}/${n}`,
        message: 'sha256 expected 0, computed 1',
      }));
      const failed = (await queue().getJob(job.id!))!;
      await failed.updateData({
        ...failed.data,
        error: { code: 'checksum_mismatch', message: 'm'.repeat(100_000), details, permanent: true },
      });
      ids.push(job.id!);
    }
  });

  afterAll(() => apps?.close());

  it('GET /imports/<id>: the first 1,000 problems, each text cut short, and the count of the rest', async () => {
    const res = await get(`/imports/${ids[0]}`);
    expect(res.status).toBe(200);
    const record = res.body as ImportRecord;
    const details = record.error!.details as { code: string; path?: string; count?: number }[];
    expect(details).toHaveLength(1001);
    expect(details[1000]).toEqual({
      code: 'more_problems',
      message: '4000 more problem(s) not listed',
      count: 4000,
    });
    expect(details[0].path!.length).toBeLessThanOrEqual(300);
    expect(record.error!.message.length).toBeLessThanOrEqual(2000);
    expect(res.text.length).toBeLessThan(800_000);
  });

  it('GET /imports: 10 problems of each record and the count of the rest', async () => {
    const res = await get('/imports?per_page=200');
    expect(res.status).toBe(200);
    const items = (res.body as { items: ImportRecord[] }).items;
    expect(items.map((r) => r.id).sort()).toEqual([...ids].sort());
    for (const record of items) {
      const details = record.error!.details as { code: string; count?: number }[];
      expect(details).toHaveLength(11);
      expect(details[10]).toMatchObject({ code: 'more_problems', count: STORED_PROBLEMS - 10 });
    }
    expect(res.text.length).toBeLessThan(3 * 20_000);
  });
});
