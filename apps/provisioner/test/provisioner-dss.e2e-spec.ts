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
import { DssApiVersion, FakeDss, FakeSubmission } from './support/fake-dss';
import { waitForImport } from './support/provisioner-e2e';

jest.setTimeout(30_000);

/** The dss source's time-out: ordinary answers of the fake take over 500 ms at load average 25. */
const DSS_TIMEOUT_MS = 4_000;

// The fake follows elixir-luxembourg/dss elixir_dss/controllers/api_controllers.py in its two
// versions (the stored version with the comma status list, file id 62144013289, and commit
// 1b26d9dda249582d9c612422a33729f2a95064b6 with the `after` cursor); see support/fake-dss.ts.

const DSS_KEY = 'fake-dss-service-key';

function submissions(): FakeSubmission[] {
  return [
    {
      id: 3,
      ref_name: 'ELX_LU_SUB-3',
      status_code: 'completed',
      local_project_name: 'NCER-PD',
      datasets: [
        { dataset_id: 'D-100', title: 'Genotypes', byte_size: '9' },
        { dataset_id: 'D-101', title: 'Not uploaded yet', byte_size: '2048' },
      ],
    },
    {
      id: 7,
      ref_name: 'ELX_LU_SUB-7',
      status_code: 'data_approval',
      local_project_name: 'NCER-PD',
      datasets: [{ dataset_id: 'D-200', title: 'RNA', byte_size: null }],
    },
    { id: 9, ref_name: 'ELX_LU_SUB-9', status_code: 'cancelled', datasets: [] },
    {
      id: 12,
      ref_name: 'ELX_LU_SUB-12',
      status_code: 'completed',
      local_project_name: 'PRJ-X',
      datasets: [],
    },
    { id: 15, ref_name: 'ELX_LU_SUB-15', status_code: 'data_upload', datasets: [] },
    {
      id: 16,
      ref_name: 'ELX_LU_SUB-16',
      status_code: 'completed',
      local_project_name: 'PRJ-X',
      datasets: [],
    },
  ];
}

async function getFake(url: string, path: string, key = DSS_KEY) {
  const res = await fetch(`${url}${path}`, { headers: { 'X-API-Key': key } });
  const text = await res.text();
  const isJson = res.headers.get('content-type') === 'application/json';
  return {
    status: res.status,
    body: isJson ? (JSON.parse(text) as Record<string, unknown>) : text,
  };
}
const refsOf = (body: unknown) =>
  ((body as { data: { ref_name: string }[] }).data ?? []).map((s) => s.ref_name);

describe('the fake submission system answers as each DSS version does', () => {
  const fakes: Record<DssApiVersion, FakeDss> = {
    comma: new FakeDss('comma', DSS_KEY, submissions()),
    paged: new FakeDss('paged', DSS_KEY, submissions()),
  };
  const urls: Partial<Record<DssApiVersion, string>> = {};
  beforeAll(async () => {
    urls.comma = await fakes.comma.start();
    urls.paged = await fakes.paged.start();
  });
  afterAll(async () => {
    await fakes.comma.stop();
    await fakes.paged.stop();
  });

  it('comma: reads only the first of repeated statuses, the whole comma list, all at once', async () => {
    const url = urls.comma!;
    // What our client used to send: completed submissions vanish.
    const repeated = await getFake(
      url,
      '/api/v1/submissions?status=data_approval&status=completed',
    );
    expect(refsOf(repeated.body)).toEqual(['ELX_LU_SUB-7']);
    const comma = await getFake(url, '/api/v1/submissions?status=data_approval,%20completed');
    expect(comma.body).toEqual({
      data: expect.arrayContaining([
        { id: 3, ref_name: 'ELX_LU_SUB-3', status: 'Complete', status_code: 'completed' },
      ]),
      count: 4,
    });
    expect(refsOf((await getFake(url, '/api/v1/submissions')).body)).toEqual([
      'ELX_LU_SUB-3',
      'ELX_LU_SUB-12',
      'ELX_LU_SUB-16',
    ]);
    expect(refsOf((await getFake(url, '/api/v1/submissions?after=12&x=1')).body)).toHaveLength(3);
    expect(await getFake(url, '/api/v1/submissions?status=cancelled')).toEqual({
      status: 400,
      body: { error: 'Unknown status, allowed: completed, data_approval' },
    });
  });

  it('comma: a single-submission route at any status; 404s for datasets it does not serve', async () => {
    const url = urls.comma!;
    const one = await getFake(url, '/api/v1/submissions/15');
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ data: { ref_name: 'ELX_LU_SUB-15', status: 'Data Upload' } });
    expect(await getFake(url, '/api/v1/submissions/15/datasets')).toEqual({
      status: 404,
      body: { error: 'Submission is not found' },
    });
    expect(await getFake(url, '/api/v1/submissions/99/datasets')).toMatchObject({
      status: 404,
      body: expect.stringContaining('Page not found'),
    });
    expect((await getFake(url, '/api/v1/healthz', 'wrong')).status).toBe(401);
  });

  it('paged: repeated statuses, the after cursor, 400 for the comma form and unknown parameters', async () => {
    const url = urls.paged!;
    const path = '/api/v1/submissions?status=data_approval&status=completed';
    expect(refsOf((await getFake(url, path)).body)).toEqual(['ELX_LU_SUB-3', 'ELX_LU_SUB-7']);
    expect(refsOf((await getFake(url, `${path}&after=7`)).body)).toEqual([
      'ELX_LU_SUB-12',
      'ELX_LU_SUB-16',
    ]);
    expect(refsOf((await getFake(url, `${path}&after=x`)).body)).toEqual([
      'ELX_LU_SUB-3',
      'ELX_LU_SUB-7',
    ]);
    expect(await getFake(url, '/api/v1/submissions?status=data_approval,completed')).toEqual({
      status: 400,
      body: {
        error:
          'Unknown status. Allowed: draft, metadata_submission, metadata_approval, ' +
          'data_upload, data_approval, completed, cancelled',
      },
    });
    expect(await getFake(url, '/api/v1/submissions?API_KEY=x')).toEqual({
      status: 400,
      body: { error: 'Unknown parameter. Allowed: status, after' },
    });
    // The entries of served statuses carry the details.
    expect((await getFake(url, '/api/v1/submissions?status=completed')).body).toMatchObject({
      data: [{ id: 3, local_project_name: 'NCER-PD' }, { id: 12 }],
      count: 2,
    });
  });

  it('paged: no single-submission route; 409 for datasets it does not serve; public healthz', async () => {
    const url = urls.paged!;
    expect(await getFake(url, '/api/v1/submissions/3')).toMatchObject({
      status: 404,
      body: expect.stringContaining('Page not found'),
    });
    expect(await getFake(url, '/api/v1/submissions/15/datasets')).toEqual({
      status: 409,
      body: { error: 'Submission is at Data Upload status' },
    });
    expect((await getFake(url, '/api/v1/submissions/99/datasets')).status).toBe(404);
    expect(await getFake(url, '/api/v1/healthz', 'wrong')).toEqual({
      status: 200,
      body: { status: 'ok' },
    });
  });
});

describe.each<DssApiVersion>(['comma', 'paged'])(
  'provisioner with dss sources (the %s service API version, BullMQ on Postgres)',
  (version) => {
    let apps: ProvisionerTestApps;
    let dss: FakeDss;
    let storageRoot: string;
    const get = (path: string) =>
      request(apps.api.getHttpServer()).get(path).set('X-API-Key', TEST_READ_KEY);
    const post = (path: string, body: object) =>
      request(apps.api.getHttpServer()).post(path).set('X-API-Key', TEST_WRITE_KEY).send(body);
    const refs = async (path: string) => {
      const res = await get(path);
      expect(res.status).toBe(200);
      return res.body.items.map((s: { ref: string }) => s.ref);
    };

    beforeAll(async () => {
      const base = tempDir(`e2e-dss-${version}`);
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
      dss = new FakeDss(version, DSS_KEY, submissions());
      const url = await dss.start();
      const source = { type: 'dss', url, api_key: DSS_KEY, landing_zone: landingZone };
      apps = await startProvisionerApps({
        ...(await queueEnv('postgres')),
        SOURCES: JSON.stringify([
          {
            ...source,
            name: 'dss',
            list_statuses: ['data_approval', 'completed'],
            // Ordinary answers come well within it on a loaded machine, the slow one well after.
            timeout_ms: DSS_TIMEOUT_MS,
          },
          { ...source, name: 'dss_default' },
          { ...source, name: 'dss_cancelled', list_statuses: ['completed', 'cancelled'] },
          { ...source, name: 'dss_badkey', api_key: 'wrong' },
        ]),
        STORAGE_ROOT: storageRoot,
      });
    });

    afterAll(async () => {
      await apps?.close();
      await dss?.stop();
    });

    afterEach(() => {
      dss.faults = {};
    });

    it('lists the submissions of every listed status, completed ones included', async () => {
      dss.requests.length = 0;
      const res = await get('/submissions/dss');
      expect(res.status).toBe(200);
      expect(
        res.body.items.map((s: { ref: string; eligible: boolean }) => `${s.ref}:${s.eligible}`),
      ).toEqual([
        'ELX_LU_SUB-3:true',
        'ELX_LU_SUB-7:false',
        'ELX_LU_SUB-12:true',
        'ELX_LU_SUB-16:true',
      ]);
      // No title in either version: the reference name stands in.
      expect(res.body.items[0]).toEqual({
        ref: 'ELX_LU_SUB-3',
        title: 'ELX_LU_SUB-3',
        status: 'completed',
        project: 'NCER-PD',
        eligible: true,
        dataset_count: 2,
        imported: false,
        collection_path: 'projects/NCER-PD/ELX_LU_SUB-3',
      });
      // One status per request, the form both versions read alike; the cursor is followed.
      expect(dss.listRequests()).toEqual(
        version === 'paged'
          ? [
              '/api/v1/submissions?status=data_approval',
              '/api/v1/submissions?status=data_approval&after=7',
              '/api/v1/submissions?status=completed',
              '/api/v1/submissions?status=completed&after=12',
              '/api/v1/submissions?status=completed&after=16',
            ]
          : [
              '/api/v1/submissions?status=data_approval',
              '/api/v1/submissions?status=data_approval&after=7',
              '/api/v1/submissions?status=completed',
              '/api/v1/submissions?status=completed&after=16',
            ],
      );
      // Then one datasets call per listed submission; the comma version's cursor check asked
      // for one submission of each status that ignored the cursor.
      expect(dss.requests.filter((r) => !dss.listRequests().includes(r.slice(4))).sort()).toEqual(
        [
          ...[3, 7, 12, 16].map((id) => `GET /api/v1/submissions/${id}/datasets`),
          ...(version === 'comma'
            ? ['GET /api/v1/submissions/3', 'GET /api/v1/submissions/7']
            : []),
        ].sort(),
      );
      expect(await refs('/submissions/dss/diff')).toEqual([
        'ELX_LU_SUB-3',
        'ELX_LU_SUB-12',
        'ELX_LU_SUB-16',
      ]);
    });

    it("without list_statuses, lists the server's default set", async () => {
      expect(await refs('/submissions/dss_default')).toEqual(
        version === 'paged'
          ? ['ELX_LU_SUB-3', 'ELX_LU_SUB-7', 'ELX_LU_SUB-9', 'ELX_LU_SUB-12', 'ELX_LU_SUB-16']
          : ['ELX_LU_SUB-3', 'ELX_LU_SUB-12', 'ELX_LU_SUB-16'],
      );
    });

    it('a status the server cannot list is a 502 quoting its answer', async () => {
      const res = await get('/submissions/dss_cancelled');
      if (version === 'paged') {
        expect(res.status).toBe(200);
        expect(res.body.items.map((s: { ref: string }) => s.ref)).toContain('ELX_LU_SUB-9');
      } else {
        expect(res.status).toBe(502);
        expect(res.body.description).toBe(
          'submission system "dss_cancelled": answered 400: Unknown status, allowed: completed, data_approval',
        );
      }
    });

    it('lists datasets with readiness from the landing zone and declared sizes, and diffs them', async () => {
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
            // Declared by the system as the string "2048".
            byte_size: 2048,
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

    it("imports a completed submission's dataset from the landing zone, verifying the MD5 manifest", async () => {
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
        local_custodians: [{ name: 'Jane Roe' }],
      });
      expect((await post('/datasets/dss/import', { dataset_id: 'D-100' })).status).toBe(200);
      expect(await refs('/submissions/dss/diff')).toEqual(['ELX_LU_SUB-12', 'ELX_LU_SUB-16']);
    });

    it('a server that ignores the status filter is a 502 saying so', async () => {
      dss.faults = { ignoreStatus: true };
      const res = await get('/submissions/dss');
      expect(res.status).toBe(502);
      expect(res.body.description).toContain(
        'listing of status "data_approval": the server ignored the status filter (submission 3 is at status "completed")',
      );
    });

    it('a count that disagrees with the entries is a 502 saying so', async () => {
      dss.faults = { countOffset: 1 };
      const res = await get('/datasets/dss/diff');
      expect(res.status).toBe(502);
      expect(res.body.description).toContain(
        'listing of status "data_approval": count 2 disagrees with the 1 entries in data',
      );
    });

    it('an entry without an id and a ref_name, or given twice, is a 502 saying so', async () => {
      dss.faults = { rewriteEntries: (entries) => [...entries, { id: 99 }] };
      expect((await get('/submissions/dss')).body.description).toBe(
        'submission system "dss": listing of status "data_approval": entry 1 has no integer id ' +
          'and ref_name',
      );
      dss.faults = { rewriteEntries: (entries) => [...entries, ...entries] };
      expect((await get('/submissions/dss')).body.description).toBe(
        'submission system "dss": listing of status "data_approval": submission 7 answered twice',
      );
    });

    if (version === 'paged') {
      it('a paging server whose cursor does not advance is a 502, never a short listing', async () => {
        dss.faults = { ignoreAfter: true };
        const res = await get('/submissions/dss');
        expect(res.status).toBe(502);
        expect(res.body.description).toBe(
          'submission system "dss": listing status "data_approval" cannot be completed: asked ' +
            'for ids after 7, the server answered id 7 (the "after" cursor did not advance)',
        );
      });
    }

    it('answers 502 when the submission system refuses the key', async () => {
      const res = await get('/submissions/dss_badkey');
      expect(res.status).toBe(502);
      expect(res.body.description).toBe(
        'submission system "dss_badkey": answered 401: Invalid or missing API key',
      );
    });

    it('answers 502 in the envelope when the submission system is too slow', async () => {
      dss.delayMs = 2 * DSS_TIMEOUT_MS;
      try {
        const res = await get('/datasets/dss/diff');
        expect(res.status).toBe(502);
        expect(res.body).toMatchObject({
          status: 'Error',
          description: expect.stringContaining(`no answer within ${DSS_TIMEOUT_MS} ms`),
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
  },
);
