import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { getQueueToken } from '@nestjs/bullmq';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Queue } from 'bullmq';
import request from 'supertest';
import { generateApiKey, hashApiKey } from '@app/auth';
import { CatalogTestApp, startCatalogApp, TEST_GLOBAL_KEY } from '../support/catalog-app';
import {
  provisionerTestSettings,
  queueEnv,
  startProvisionerApps,
  TEST_WRITE_KEY,
  type ProvisionerTestApps,
} from '../support/provisioner-app';
import { poll, until } from '../support/wait';
import { DemoCatalog, startDemoCatalog } from '../../apps/catalog-api/test/demo-catalog.fixture';
import { eluValidatorFor } from '../../apps/catalog-api/test/support/elu-schemas';
import { createProvisionerApiApp } from '../../apps/provisioner/src/http-app';
import {
  STORAGE_REGISTRATION_QUEUE,
  storageRegistrationJobId,
} from '../../apps/provisioner/src/storage-registration/storage-registration.queue';
import type { ImportRecord } from '../../apps/provisioner/src/imports/import-record';
import { DropzoneFixture, tempDir } from '../../apps/provisioner/test/support/dropzone-fixture';
import { dropzoneEnv, waitForImport } from '../../apps/provisioner/test/support/provisioner-e2e';
import { startWorkerProcess } from '../../apps/provisioner/test/support/worker-process';

/** The provisioner's registration key; the catalog knows only its SHA-256. */
const REGISTRATION_KEY = generateApiKey(48);
const CATALOG_ENV = {
  REGISTRATION_API_KEY_SHA256: hashApiKey(REGISTRATION_KEY),
  DCAT_PUBLISHER_NAME: 'Luxembourg Centre for Systems Biomedicine',
};
const LCSB = 'Luxembourg Centre for Systems Biomedicine';

interface DatasetExport {
  name: string;
  external_id: string;
  storages: { platform: string; location: string }[];
  transfers: { partner: string; transfer_details: string; transfer_date: string }[];
}

async function listen(app: NestExpressApplication, port = 0): Promise<number> {
  await app.listen(port, '127.0.0.1');
  return (app.getHttpServer().address() as AddressInfo).port;
}

async function catalogDataset(
  catalog: CatalogTestApp,
  title: string,
): Promise<DatasetExport | undefined> {
  await catalog.versionSettled();
  const res = await request(catalog.server)
    .get('/api/datasets')
    .set('X-API-Key', TEST_GLOBAL_KEY)
    .expect(200);
  return (res.body.items as DatasetExport[]).find((d) => d.name === title);
}

async function importRecord(api: NestExpressApplication, id: string): Promise<ImportRecord> {
  const res = await request(api.getHttpServer())
    .get(`/imports/${encodeURIComponent(id)}`)
    .set('X-API-Key', TEST_WRITE_KEY)
    .expect(200);
  return res.body as ImportRecord;
}

/** Polls the import record until its registration is in `state` (retries included). */
async function waitForCatalog(
  api: NestExpressApplication,
  id: string,
  state: string,
  timeoutMs = 30_000,
): Promise<ImportRecord> {
  let record: ImportRecord | undefined;
  await until(
    async () => (record = await importRecord(api, id)).catalog?.state === state,
    `import ${id} to be ${state} in the catalog`,
    timeoutMs,
    50,
  );
  return record!;
}

/** Requests an import; the id of the import that runs (a 409 names the one already running). */
async function startImport(api: NestExpressApplication, datasetId: string): Promise<string> {
  const res = await request(api.getHttpServer())
    .post('/datasets/dropzone/import')
    .set('X-API-Key', TEST_WRITE_KEY)
    .send({ dataset_id: datasetId });
  expect([200, 202, 409]).toContain(res.status);
  if (res.status === 409) return (res.body.more.import as ImportRecord).id;
  return (res.body as ImportRecord).id;
}

describe('every published import is registered in the catalog (issue 17)', () => {
  let catalog: DemoCatalog | CatalogTestApp;
  let demo: DemoCatalog;
  let port: number;
  let apps: ProvisionerTestApps;
  let storageRoot: string;
  const dropzone = new DropzoneFixture(join(tempDir('e2e-registration'), 'dropzone'));

  beforeAll(async () => {
    demo = await startDemoCatalog(CATALOG_ENV);
    catalog = demo;
    port = await listen(demo.app);
    const imaging = await demo.accession('PD-OMICS imaging');
    const otherProjects = await demo.accession('EPIC-DREM sequencing data');
    dropzone
      .submission('SUB-1', {
        project: 'PD-OMICS',
        partner: 'LCSB',
        datasets: ['DS-1', 'DS-ACC', 'DS-C1', 'DS-DOWN', 'DS-STEAL'],
      })
      .submission('SUB-2', { project: 'PD-OMICS', datasets: ['DS-C2'] })
      .submission('SUB-X', { project: 'NOT-IN-CATALOG', datasets: ['DS-X'] })
      .dataset('DS-1', { submission: 'SUB-1', title: 'Provisioned reads', files: { 'a.txt': 'a' } })
      .dataset('DS-ACC', { submission: 'SUB-1', accession: imaging, files: { 'b.txt': 'b' } })
      .dataset('DS-STEAL', {
        submission: 'SUB-1',
        accession: otherProjects,
        files: { 's.txt': 's' },
      })
      .dataset('DS-C1', { submission: 'SUB-1', title: 'Imported twice', files: { 'c.txt': 'c' } })
      .dataset('DS-C2', { submission: 'SUB-2', title: 'Imported twice', files: { 'd.txt': 'd' } })
      .dataset('DS-DOWN', { submission: 'SUB-1', title: 'While down', files: { 'e.txt': 'e' } })
      .dataset('DS-X', { submission: 'SUB-X', files: { 'x.txt': 'x' } });
    storageRoot = join(dropzone.root, '../storage');
    apps = await startProvisionerApps(
      await dropzoneEnv(dropzone, storageRoot, {
        CATALOG_URL: `http://127.0.0.1:${port}`,
        CATALOG_API_KEY: REGISTRATION_KEY,
        CATALOG_STORAGE_PLATFORM: 'lcsb-atlas',
        CATALOG_RETRY_DELAY_MS: '100',
        CATALOG_MAX_ATTEMPTS: '20',
      }),
    );
  });

  afterAll(async () => {
    await apps?.close();
    await catalog?.close();
  });

  it('lands in the catalog export (schema-valid), the import record and the dataset listing', async () => {
    const id = await startImport(apps.api, 'DS-1');
    expect(await waitForImport(apps.api, id)).toMatchObject({ state: 'imported' });
    const record = await waitForCatalog(apps.api, id, 'registered');
    expect(record.catalog).toEqual({
      state: 'registered',
      accession: expect.stringMatching(/^ELU_I_\d+$/),
      error: null,
    });
    const dataset = await catalogDataset(catalog, 'Provisioned reads');
    expect(dataset).toMatchObject({
      external_id: record.catalog!.accession,
      storages: [{ platform: 'lcsb-atlas', location: record.path }],
      transfers: [
        {
          partner: LCSB,
          transfer_details: `source dropzone, submission SUB-1, import ${id}`,
          transfer_date: new Date().toISOString().slice(0, 10),
        },
      ],
    });
    const validate = eluValidatorFor('elu-dataset.json');
    expect(validate(dataset)).toBe(true);
    const listing = await request(apps.api.getHttpServer())
      .get('/datasets/dropzone?submission=SUB-1')
      .set('X-API-Key', TEST_WRITE_KEY)
      .expect(200);
    const byId = Object.fromEntries(
      (listing.body.items as { dataset_id: string; catalog_accession: string | null }[]).map(
        (d) => [d.dataset_id, d.catalog_accession],
      ),
    );
    expect(byId).toMatchObject({ 'DS-1': record.catalog!.accession, 'DS-DOWN': null });
    // The DCAT distribution of the copy: its bytes (one file, "a") and the SHA-256 of the
    // manifest the import stored beside it.
    const manifest = readFileSync(
      join(storageRoot, record.path, '.provisioner/manifest-sha256.txt'),
    );
    const sha = createHash('sha256').update(manifest).digest('hex');
    const dcat = await request(catalog.server)
      .get(`/api/dcat/datasets/${record.catalog!.accession}`)
      .set('X-API-Key', TEST_GLOBAL_KEY)
      .expect(200);
    expect(dcat.text).toContain('dcat:byteSize "1"^^xsd:nonNegativeInteger');
    expect(dcat.text).toContain(`spdx:checksumValue "${sha}"^^xsd:hexBinary`);
    expect(dcat.text).toContain('spdx:algorithm spdx:checksumAlgorithm_sha256');
  });

  it('adds the copy to the dataset the accession in dataset.json names', async () => {
    const id = await startImport(apps.api, 'DS-ACC');
    const record = await waitForCatalog(apps.api, id, 'registered');
    expect(record.catalog!.accession).toBe(await demo.accession('PD-OMICS imaging'));
    const dataset = await catalogDataset(catalog, 'PD-OMICS imaging');
    expect(dataset!.storages).toContainEqual({
      platform: 'lcsb-atlas',
      location: record.path,
      accesses: [],
    });
  });

  /** The import of `datasetId` is imported and its registration refused for `code`, counted once. */
  async function expectRefused(datasetId: string, code: string, message: unknown) {
    const id = await startImport(apps.api, datasetId);
    const record = await waitForCatalog(apps.api, id, 'refused');
    expect(record).toMatchObject({
      state: 'imported',
      catalog: { state: 'refused', accession: null, error: { code, message } },
    });
    // The worker counts the refusal after it records it: wait for the count, then it must be 1.
    const counted = new RegExp(
      `provisioner_catalog_registrations_total\\{outcome="refused",reason="${code}"[^}]*\\} (\\d+)\n`,
    );
    const count = await poll(async () => {
      const metrics = await request(apps.worker.getHttpServer()).get('/metrics').expect(200);
      return counted.exec(metrics.text)?.[1];
    }, `the refusal for ${code} counted`);
    expect(count).toBe('1');
    return { id, record };
  }

  it('refuses a project the catalog does not know, visibly and without retrying', async () => {
    await expectRefused('DS-X', 'unknown_project', expect.stringContaining('NOT-IN-CATALOG'));
  });

  it("refuses a copy of PD-OMICS's submission onto another project's dataset, once, and shows why", async () => {
    const target = await demo.accession('EPIC-DREM sequencing data');
    const before = await catalogDataset(catalog, 'EPIC-DREM sequencing data');
    const { id, record } = await expectRefused(
      'DS-STEAL',
      'accession_in_other_project',
      `catalog refused (409): Dataset ${target} does not belong to project PD-OMICS`,
    );
    // Final: its registration job failed on the first attempt, not waiting out a retry.
    const queue = apps.worker.get<Queue>(getQueueToken(STORAGE_REGISTRATION_QUEUE));
    const job = await queue.getJob(storageRegistrationJobId(id));
    expect({ attempts: job?.attemptsMade, failed: await job?.isFailed() }).toEqual({
      attempts: 1,
      failed: true,
    });
    expect(await catalogDataset(catalog, 'EPIC-DREM sequencing data')).toEqual(before);
    const dcat = await request(catalog.server)
      .get(`/api/dcat/datasets/${target}`)
      .set('X-API-Key', TEST_GLOBAL_KEY)
      .expect(200);
    expect(dcat.text).not.toContain(record.path);
  });

  it('concurrent imports of one dataset and a repeated request: one dataset, one row per copy', async () => {
    const ids = await Promise.all(['DS-C1', 'DS-C2', 'DS-C1'].map((d) => startImport(apps.api, d)));
    expect(ids[0]).toBe(ids[2]);
    const records = await Promise.all(
      ids.slice(0, 2).map((id) => waitForCatalog(apps.api, id, 'registered')),
    );
    expect(records[0].catalog!.accession).toBe(records[1].catalog!.accession);
    const dataset = await catalogDataset(catalog, 'Imported twice');
    expect(dataset!.storages.map((s) => s.location).sort()).toEqual(
      records.map((r) => r.path).sort(),
    );
    expect(dataset!.transfers).toHaveLength(1); // SUB-2 names no partner
  });

  it('a re-import after the dataset was removed from storage adds no second row', async () => {
    const first = await importRecord(apps.api, 'dropzone-dataset-DS-1');
    const published = join(storageRoot, first.path);
    execFileSync('chmod', ['-R', 'u+w', published]);
    rmSync(published, { recursive: true });
    const id = await startImport(apps.api, 'DS-1');
    await until(
      async () => (await importRecord(apps.api, id)).finished_at !== first.finished_at,
      'the re-import to finish',
      30_000,
      50,
    );
    await waitForCatalog(apps.api, id, 'registered');
    const dataset = await catalogDataset(catalog, 'Provisioned reads');
    expect(dataset!.storages).toHaveLength(1);
    expect(dataset!.transfers).toHaveLength(1);
  });

  it('with the catalog stopped, the import publishes; the registration lands once it is back', async () => {
    await catalog.close();
    const id = await startImport(apps.api, 'DS-DOWN');
    expect(await waitForImport(apps.api, id)).toMatchObject({ state: 'imported', error: null });
    const waiting = await importRecord(apps.api, id);
    expect(waiting.catalog?.state).toBe('pending');
    await until(
      async () => (await importRecord(apps.api, id)).catalog?.error?.code === 'catalog_unavailable',
      'a failed attempt to show on the record',
      30_000,
      50,
    );
    catalog = await startCatalogApp(CATALOG_ENV, demo.databaseUrl);
    await listen(catalog.app, port);
    const record = await waitForCatalog(apps.api, id, 'registered');
    expect(record.catalog!.error).toBeNull();
    expect((await catalogDataset(catalog, 'While down'))!.storages).toEqual([
      { platform: 'lcsb-atlas', location: record.path, accesses: [] },
    ]);
  });
});

describe('a worker killed after the catalog registered, before it recorded the answer', () => {
  let catalog: DemoCatalog;
  let gate: Server;
  let api: NestExpressApplication;
  const workers: ChildProcess[] = [];

  afterAll(async () => {
    for (const worker of workers) if (worker.exitCode === null) worker.kill('SIGKILL');
    await api?.close();
    gate?.closeAllConnections();
    await new Promise((r) => gate?.close(r));
    await catalog?.close();
  });

  it('registers again on the next worker: still one storage row and one transfer', async () => {
    catalog = await startDemoCatalog(CATALOG_ENV);
    const catalogPort = await listen(catalog.app);
    // In front of the catalog: forwards every registration, but withholds the first answer,
    // so the worker is killed with the catalog's write committed and its answer unseen. The
    // worker's other calls (its trail events) pass untouched and are not counted.
    let forwarded = 0;
    gate = createServer((req, res) => {
      const chunks: Buffer[] = [];
      const registration = req.url === '/api/registrations';
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void fetch(`http://127.0.0.1:${catalogPort}${req.url}`, {
          method: req.method,
          headers: { 'content-type': 'application/json', 'x-api-key': REGISTRATION_KEY },
          body: Buffer.concat(chunks),
        }).then(async (answer) => {
          if (registration) forwarded += 1;
          if (registration && forwarded === 1) return; // withheld
          res.writeHead(answer.status, { 'content-type': 'application/json' });
          res.end(await answer.text());
        });
      });
    }).listen(0, '127.0.0.1');
    await new Promise((r) => gate.once('listening', r));

    const dropzone = new DropzoneFixture(join(tempDir('e2e-registration-kill'), 'dropzone'));
    dropzone
      .submission('SUB-K', { project: 'EPIC-DREM', partner: 'LCSB', datasets: ['DS-K'] })
      .dataset('DS-K', { submission: 'SUB-K', title: 'Killed mid-call', files: { 'k.txt': 'k' } });
    const env = await dropzoneEnv(dropzone, join(dropzone.root, '../storage'), {
      IMPORT_LOCK_MS: '2000',
      CATALOG_URL: `http://127.0.0.1:${(gate.address() as AddressInfo).port}`,
      CATALOG_API_KEY: REGISTRATION_KEY,
      CATALOG_RETRY_DELAY_MS: '100',
    });
    api = await createProvisionerApiApp(provisionerTestSettings(env));
    await api.init();
    workers.push(await startWorkerProcess(env));

    const id = await startImport(api, 'DS-K');
    await until(() => forwarded === 1, 'the first registration to reach the catalog', 60_000, 20);
    workers[0].kill('SIGKILL');
    await new Promise((r) => workers[0].once('exit', r));
    expect((await importRecord(api, id)).catalog?.state).toBe('pending');

    workers.push(await startWorkerProcess(env));
    const record = await waitForCatalog(api, id, 'registered', 60_000);
    expect(forwarded).toBeGreaterThanOrEqual(2);
    const dataset = await catalogDataset(catalog, 'Killed mid-call');
    expect(dataset).toMatchObject({
      external_id: record.catalog!.accession,
      storages: [{ location: record.path }],
      transfers: [{ partner: LCSB }],
    });
    expect(dataset!.storages).toHaveLength(1);
    expect(dataset!.transfers).toHaveLength(1);
  }, 180_000); // two worker processes start (ts-node) and a stalled job waits out its lock
});

describe("on the PostgreSQL queue backend (npm start's default)", () => {
  let demo: DemoCatalog;
  let apps: ProvisionerTestApps;
  const dropzone = new DropzoneFixture(join(tempDir('e2e-registration-pg'), 'dropzone'));

  beforeAll(async () => {
    demo = await startDemoCatalog(CATALOG_ENV);
    const port = await listen(demo.app);
    dropzone.submission('SUB-PG', { project: 'PD-OMICS', datasets: ['DS-PG'] }).dataset('DS-PG', {
      submission: 'SUB-PG',
      title: 'Queued in PostgreSQL',
      files: { 'p.txt': 'p' },
    });
    const env = await dropzoneEnv(dropzone, join(dropzone.root, '../storage'), {
      ...(await queueEnv('postgres')),
      CATALOG_URL: `http://127.0.0.1:${port}`,
      CATALOG_API_KEY: REGISTRATION_KEY,
      CATALOG_STORAGE_PLATFORM: 'lcsb-atlas',
    });
    // Without REDIS_URL the queue, its records and the registration outbox are in PostgreSQL.
    apps = await startProvisionerApps(
      Object.fromEntries(Object.entries(env).filter(([name]) => name !== 'REDIS_URL')),
    );
    expect(apps.settings.REDIS_URL).toBeUndefined();
  });

  afterAll(async () => {
    await apps?.close();
    await demo?.close();
  });

  it('registers a published import as the Redis set-up does', async () => {
    const id = await startImport(apps.api, 'DS-PG');
    expect(await waitForImport(apps.api, id)).toMatchObject({ state: 'imported' });
    const record = await waitForCatalog(apps.api, id, 'registered');
    expect(await catalogDataset(demo, 'Queued in PostgreSQL')).toMatchObject({
      external_id: record.catalog!.accession,
      storages: [{ platform: 'lcsb-atlas', location: record.path }],
    });
  });
});
