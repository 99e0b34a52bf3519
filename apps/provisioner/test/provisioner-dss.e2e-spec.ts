import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import {
  queueEnv,
  startProvisionerApps,
  ProvisionerTestApps,
  TEST_READ_KEY,
  TEST_WRITE_KEY,
} from '../../../test/support/provisioner-app';
import { digest, tempDir, writeDatasetDirectory } from './support/dropzone-fixture';
import { FakeDss, FakeSubmission } from './support/fake-dss';
import { waitForImport } from './support/provisioner-e2e';

jest.setTimeout(30_000);

const DSS_KEY = 'fake-dss-service-key';

function submissions(): FakeSubmission[] {
  return [
    {
      id: 3,
      ref_name: 'ELX_LU_SUB-3',
      status_code: 'completed',
      title: 'Cohort A',
      local_project_name: 'NCER-PD',
      datasets: [
        { dataset_id: 'D-100', title: 'Genotypes', byte_size: 9 },
        { dataset_id: 'D-101', title: 'Not uploaded yet' },
      ],
    },
    {
      id: 7,
      ref_name: 'ELX_LU_SUB-7',
      status_code: 'data_approval',
      title: 'Cohort B',
      local_project_name: 'NCER-PD',
      datasets: [{ dataset_id: 'D-200', title: 'RNA' }],
    },
    {
      id: 9,
      ref_name: 'ELX_LU_SUB-9',
      status_code: 'cancelled',
      title: 'Withdrawn',
      local_project_name: 'NCER-PD',
      datasets: [],
    },
    {
      id: 12,
      ref_name: 'ELX_LU_SUB-12',
      status_code: 'completed',
      title: 'Cohort C',
      local_project_name: 'PRJ-X',
      datasets: [],
    },
    {
      id: 15,
      ref_name: 'ELX_LU_SUB-15',
      status_code: 'data_upload',
      title: 'Uploading',
      local_project_name: 'PRJ-X',
      datasets: [],
    },
  ];
}

// The Postgres queue backend runs this suite; the drop-zone suite runs on Redis when there is one.
describe('provisioner with a dss source (fake submission system, BullMQ on Postgres)', () => {
  let apps: ProvisionerTestApps;
  let dss: FakeDss;
  let storageRoot: string;
  const get = (path: string) =>
    request(apps.api.getHttpServer()).get(path).set('X-API-Key', TEST_READ_KEY);
  const post = (path: string, body: object) =>
    request(apps.api.getHttpServer()).post(path).set('X-API-Key', TEST_WRITE_KEY).send(body);

  beforeAll(async () => {
    const base = tempDir('e2e-dss');
    storageRoot = join(base, 'storage');
    const landingZone = join(base, 'landing');
    writeDatasetDirectory(join(landingZone, 'D-100'), {
      submission: 'ELX_LU_SUB-3',
      files: { 'geno.vcf': 'chr1\t1\tA\n' },
      manifests: ['md5'],
    });
    writeDatasetDirectory(join(landingZone, 'D-200'), {
      submission: 'ELX_LU_SUB-7',
      files: { 'rna.csv': 'x' },
    });
    dss = new FakeDss(DSS_KEY, submissions());
    const url = await dss.start();
    apps = await startProvisionerApps({
      ...(await queueEnv('postgres')),
      SOURCES: JSON.stringify([
        {
          name: 'dss',
          type: 'dss',
          url,
          api_key: DSS_KEY,
          landing_zone: landingZone,
          timeout_ms: 500,
        },
        { name: 'dss_badkey', type: 'dss', url, api_key: 'wrong', landing_zone: landingZone },
      ]),
      STORAGE_ROOT: storageRoot,
    });
  });

  afterAll(async () => {
    await apps?.close();
    await dss?.stop();
  });

  it('lists every submission the system lists, across pages, with eligibility from the status code', async () => {
    const res = await get('/submissions/dss');
    expect(res.status).toBe(200);
    expect(
      res.body.items.map((s: { ref: string; eligible: boolean }) => `${s.ref}:${s.eligible}`),
    ).toEqual([
      'ELX_LU_SUB-3:true',
      'ELX_LU_SUB-7:false',
      'ELX_LU_SUB-9:false',
      'ELX_LU_SUB-12:true',
    ]);
    expect(res.body.items[0]).toEqual({
      ref: 'ELX_LU_SUB-3',
      title: 'Cohort A',
      status: 'completed',
      project: 'NCER-PD',
      eligible: true,
      dataset_count: 2,
      imported: false,
      collection_path: 'projects/NCER-PD/ELX_LU_SUB-3',
    });
    expect(res.body.items[3].title).toBe('Cohort C');
    // Keyset paging: three pages of two, the last one empty.
    expect(
      dss.requests.filter(
        (r) => r.startsWith('GET /api/v1/submissions?') || r === 'GET /api/v1/submissions',
      ),
    ).toEqual(
      expect.arrayContaining([
        'GET /api/v1/submissions',
        'GET /api/v1/submissions?after=7',
        'GET /api/v1/submissions?after=12',
      ]),
    );
    expect(
      (await get('/submissions/dss/diff')).body.items.map((s: { ref: string }) => s.ref),
    ).toEqual(['ELX_LU_SUB-3', 'ELX_LU_SUB-12']);
  });

  it('lists datasets with readiness from the landing zone, and diffs them', async () => {
    const res = await get('/datasets/dss?submission=ELX_LU_SUB-3');
    expect(res.body).toEqual({
      count: 2,
      items: [
        {
          dataset_id: 'D-100',
          submission: 'ELX_LU_SUB-3',
          title: 'Genotypes',
          file_count: 1,
          byte_size: 9,
          ready: true,
          imported: false,
          path: 'projects/NCER-PD/ELX_LU_SUB-3/data/raw/D-100',
        },
        {
          dataset_id: 'D-101',
          submission: 'ELX_LU_SUB-3',
          title: 'Not uploaded yet',
          file_count: null,
          byte_size: null,
          ready: false,
          imported: false,
          path: 'projects/NCER-PD/ELX_LU_SUB-3/data/raw/D-101',
        },
      ],
    });
    const diff = await get('/datasets/dss/diff');
    expect(
      diff.body.items.map(
        (d: { dataset_id: string; reason: string | null }) => `${d.dataset_id}:${d.reason}`,
      ),
    ).toEqual(['D-100:null', 'D-101:not_delivered']);
    expect((await post('/datasets/dss/import', { dataset_id: 'D-200' })).status).toBe(409);
    expect((await get('/datasets/dss?submission=ELX_LU_SUB-404')).status).toBe(404);
  });

  it('imports a dataset from the landing zone, verifying the MD5 manifest', async () => {
    const res = await post('/datasets/dss/import', { dataset_id: 'D-100' });
    expect(res.status).toBe(202);
    const record = await waitForImport(apps.api, res.body.id);
    expect(record).toMatchObject({
      id: 'dss-dataset-D-100',
      state: 'imported',
      path: 'projects/NCER-PD/ELX_LU_SUB-3/data/raw/D-100',
    });
    const provenance = JSON.parse(
      readFileSync(join(storageRoot, record.path, '.provisioner/provenance.json'), 'utf8'),
    );
    expect(provenance.files).toEqual([
      {
        path: 'geno.vcf',
        size: 9,
        sha256: digest('sha256', 'chr1\t1\tA\n'),
        md5: digest('md5', 'chr1\t1\tA\n'),
      },
    ]);
    expect(provenance.source).toEqual({ name: 'dss', type: 'dss' });
    const submission = JSON.parse(
      readFileSync(join(storageRoot, 'projects/NCER-PD/ELX_LU_SUB-3/submission.json'), 'utf8'),
    );
    expect(submission.submission.details).toMatchObject({
      local_project_name: 'NCER-PD',
      local_custodians: [{ name: 'Steward' }],
    });
    expect((await post('/datasets/dss/import', { dataset_id: 'D-100' })).status).toBe(200);
    expect(
      (await get('/submissions/dss/diff')).body.items.map((s: { ref: string }) => s.ref),
    ).toEqual(['ELX_LU_SUB-12']);
  });

  it('answers 502 when the submission system refuses the key', async () => {
    const res = await get('/submissions/dss_badkey');
    expect(res.status).toBe(502);
    expect(res.body.description).toContain('401');
  });

  it('answers 502 in the envelope when the submission system is too slow', async () => {
    dss.delayMs = 1500;
    try {
      const res = await get('/datasets/dss/diff');
      expect(res.status).toBe(502);
      expect(res.body).toMatchObject({
        status: 'Error',
        description: expect.stringContaining('no answer within 500 ms'),
      });
    } finally {
      dss.delayMs = 0;
    }
  });

  it('answers 502 on every route when the submission system is down, and queues nothing', async () => {
    await dss.stop();
    for (const path of [
      '/submissions/dss',
      '/submissions/dss/diff',
      '/datasets/dss',
      '/datasets/dss/diff',
    ]) {
      const res = await get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 502 });
      expect(res.body).toMatchObject({ status: 'Error', more: { source: 'dss' } });
    }
    expect((await post('/datasets/dss/import', { dataset_id: 'D-200' })).status).toBe(502);
    expect((await post('/submissions/dss/import', { submission: 'ELX_LU_SUB-12' })).status).toBe(
      502,
    );
    expect((await get('/imports')).body.count).toBe(1);
  });
});
