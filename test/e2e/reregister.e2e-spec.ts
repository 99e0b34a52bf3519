import { execFile } from 'node:child_process';
import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { generateApiKey, hashApiKey } from '@app/auth';
import { DemoCatalog, startDemoCatalog } from '../../apps/catalog-api/test/demo-catalog.fixture';
import { IMPORTS_QUEUE } from '../../apps/provisioner/src/imports/import.queue';
import type { ImportRecord } from '../../apps/provisioner/src/imports/import-record';
import {
  STORAGE_REGISTRATION_QUEUE,
  storageRegistrationJobId,
} from '../../apps/provisioner/src/storage-registration/storage-registration.queue';
import { DropzoneFixture, tempDir } from '../../apps/provisioner/test/support/dropzone-fixture';
import { dropzoneEnv, waitForImport } from '../../apps/provisioner/test/support/provisioner-e2e';
import { entryCommand } from '../support/app-process';
import { CatalogTestApp, startCatalogApp, TEST_GLOBAL_KEY } from '../support/catalog-app';
import { createEmptyDatabase } from '../support/databases';
import {
  startProvisionerApps,
  TEST_READ_KEY,
  TEST_WRITE_KEY,
  type ProvisionerTestApps,
} from '../support/provisioner-app';
import { APP_START_MS, PROCESS_START_MS } from '../support/timeouts';
import { poll } from '../support/wait';

/**
 * `npm run provisioner -- reregister` after the catalog was restored from a backup older than
 * storage (deploy/backup/backup.sh and restore.sh on the catalog's database), with the real
 * catalog and provisioner apps: the registrations made after the backup, and one the outbox gave
 * up on while the catalog was down, are back in the catalog and on the import records; a second
 * run changes nothing.
 */

const ROOT = join(__dirname, '../..');
const run = promisify(execFile);
const REGISTRATION_KEY = generateApiKey(48);
const CATALOG_ENV = { REGISTRATION_API_KEY_SHA256: hashApiKey(REGISTRATION_KEY) };

interface ListedDataset {
  name: string;
  external_id: string;
  storages: { platform: string; location: string }[];
  transfers: { transfer_details: string }[];
}

/** The command's whole JSON summary: every count not named is 0. */
function summaryOf(counts: Record<string, number>): Record<string, number> {
  return {
    datasets: 0,
    added: 0,
    unchanged: 0,
    refused: 0,
    unavailable: 0,
    no_provenance: 0,
    would_register: 0,
    records_queued: 0,
    ...counts,
  };
}

async function listen(app: NestExpressApplication, port = 0): Promise<number> {
  await app.listen(port, '127.0.0.1');
  return (app.getHttpServer().address() as AddressInfo).port;
}

async function importRecord(apps: ProvisionerTestApps, id: string): Promise<ImportRecord> {
  const res = await request(apps.api.getHttpServer())
    .get(`/imports/${encodeURIComponent(id)}`)
    .set('X-API-Key', TEST_WRITE_KEY)
    .expect(200);
  return res.body as ImportRecord;
}

async function importDataset(apps: ProvisionerTestApps, datasetId: string): Promise<string> {
  const res = await request(apps.api.getHttpServer())
    .post('/datasets/dropzone/import')
    .set('X-API-Key', TEST_WRITE_KEY)
    .send({ dataset_id: datasetId })
    .expect(202);
  const { id } = res.body as ImportRecord;
  expect(await waitForImport(apps.api, id)).toMatchObject({ state: 'imported' });
  return id;
}

/** Polls an import record until its registration satisfies `done`. */
function recordWhen(
  apps: ProvisionerTestApps,
  id: string,
  done: (r: ImportRecord) => boolean,
  what: string,
): Promise<ImportRecord> {
  return poll(
    async () => {
      const record = await importRecord(apps, id);
      return done(record) ? record : undefined;
    },
    `import ${id}: ${what}`,
    20_000,
    50,
  );
}

async function listing(catalog: CatalogTestApp): Promise<ListedDataset[]> {
  await catalog.versionSettled();
  const res = await request(catalog.server)
    .get('/api/datasets?per_page=100')
    .set('X-API-Key', TEST_GLOBAL_KEY)
    .expect(200);
  return res.body.items as ListedDataset[];
}

describe('provisioner reregister: published datasets back in a catalog restored from an older backup', () => {
  const dropzone = new DropzoneFixture(join(tempDir('e2e-reregister'), 'dropzone'));
  const storageRoot = join(dropzone.root, '../storage');
  let demo: DemoCatalog;
  let restored: CatalogTestApp;
  let apps: ProvisionerTestApps;
  let port: number;
  let env: Record<string, string>;
  let work: string;
  const ids: Record<string, string> = {};

  /** The command as an operator runs it, in its own process; its exit code and JSON summary. */
  async function reregister(...args: string[]) {
    const { code, stdout, stderr } = await run(
      process.execPath,
      [...entryCommand('provisioner', 'src/provisioner.cli').args, 'reregister', '--json', ...args],
      { cwd: ROOT, env: { ...process.env, ...env } },
    ).then(
      (out) => ({ code: 0, ...out }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    const lines = stdout.trim().split('\n');
    return {
      code,
      stderr,
      lines: lines.slice(0, -1),
      summary: (JSON.parse(lines.at(-1) ?? '{}') as { reregister?: Record<string, number> })
        .reregister,
    };
  }

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'reregister-'));
    demo = await startDemoCatalog(CATALOG_ENV);
    port = await listen(demo.app);
    dropzone
      .submission('SUB-1', {
        project: 'PD-OMICS',
        partner: 'LCSB',
        datasets: ['DS-OLD', 'DS-NEW', 'DS-ACC', 'DS-DOWN', 'DS-LATE'],
      })
      .dataset('DS-OLD', {
        submission: 'SUB-1',
        title: 'Before the backup',
        files: { 'a.txt': 'a' },
      })
      .dataset('DS-NEW', {
        submission: 'SUB-1',
        title: 'After the backup',
        files: { 'b.txt': 'b' },
      })
      .dataset('DS-ACC', {
        submission: 'SUB-1',
        accession: await demo.accession('PD-OMICS imaging'),
        files: { 'c.txt': 'c' },
      })
      .dataset('DS-DOWN', {
        submission: 'SUB-1',
        title: 'While the catalog was down',
        files: { 'd.txt': 'd' },
      })
      .dataset('DS-LATE', {
        submission: 'SUB-1',
        title: 'Published while the outbox waits',
        files: { 'e.txt': 'e' },
      });
    env = await dropzoneEnv(dropzone, storageRoot, {
      CATALOG_URL: `http://127.0.0.1:${port}`,
      CATALOG_API_KEY: REGISTRATION_KEY,
      CATALOG_STORAGE_PLATFORM: 'lcsb-atlas',
      // The outbox gives up soon (the test waits for it): two tries, 100 ms apart.
      CATALOG_RETRY_DELAY_MS: '100',
      CATALOG_MAX_ATTEMPTS: '2',
      PROVISIONER_API_KEY: TEST_WRITE_KEY,
      PROVISIONER_READ_API_KEYS: TEST_READ_KEY,
      LOG_LEVEL: 'silent',
    });
    apps = await startProvisionerApps(env);
  }, APP_START_MS);

  afterAll(async () => {
    await apps?.close();
    await demo?.close().catch(() => undefined);
    await restored?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it(
    'after the restore: registers what the backup missed, and sets the import records right',
    async () => {
      ids.old = await importDataset(apps, 'DS-OLD');
      await recordWhen(apps, ids.old, (r) => r.catalog?.state === 'registered', 'registered');

      // The catalog's backup, then two more registrations it does not hold.
      const backup = join(work, 'backup');
      await run(join(ROOT, 'deploy/backup/backup.sh'), [backup], {
        env: { ...process.env, CATALOG_DATABASE_URL: demo.databaseUrl },
      });
      for (const [key, dataset] of [
        ['new', 'DS-NEW'],
        ['acc', 'DS-ACC'],
      ]) {
        ids[key] = await importDataset(apps, dataset);
        await recordWhen(apps, ids[key], (r) => r.catalog?.state === 'registered', 'registered');
      }

      // The catalog goes; one more import publishes, and its registration is given up on.
      await demo.close();
      ids.down = await importDataset(apps, 'DS-DOWN');
      await recordWhen(
        apps,
        ids.down,
        (r) => r.catalog?.error?.code === 'catalog_gave_up',
        'registration given up',
      );

      // The catalog restored from its backup, at the same address.
      const database = await createEmptyDatabase('restored');
      await run(join(ROOT, 'deploy/backup/restore.sh'), [backup], {
        env: { ...process.env, CATALOG_DATABASE_URL: database },
      });
      restored = await startCatalogApp(CATALOG_ENV, database);
      await listen(restored.app, port);
      const before = await listing(restored);
      const titles = before.map((d) => d.name);
      expect(titles).toContain('Before the backup');
      expect(titles).not.toContain('After the backup');
      expect(titles).not.toContain('While the catalog was down');
      const imaging = before.find((d) => d.name === 'PD-OMICS imaging')!;
      expect(imaging.storages.filter((s) => s.platform === 'lcsb-atlas')).toEqual([]);

      // --dry-run: lists the four, sends nothing.
      const dry = await reregister('--dry-run');
      expect({ code: dry.code, summary: dry.summary }).toMatchObject({
        code: 0,
        summary: { datasets: 4, would_register: 4, added: 0 },
      });
      expect(await listing(restored)).toEqual(before);

      const first = await reregister();
      expect(first).toMatchObject({
        code: 0,
        summary: {
          datasets: 4,
          added: 3,
          unchanged: 1,
          refused: 0,
          unavailable: 0,
          no_provenance: 0,
        },
      });
      // The record given up on is queued again; the others name what the catalog answered
      // (the one dataset created anew may have been given another accession: queued too then).
      expect(first.summary!.records_queued).toBeGreaterThanOrEqual(1);
      expect(first.lines).toHaveLength(4);
      expect(first.lines.find((l) => l.includes('/DS-OLD'))).toMatch(
        /^unchanged +\S+ ELU_I_\d+ record in_line$/,
      );
      expect(first.lines.find((l) => l.includes('/DS-DOWN'))).toMatch(
        /^added +\S+ ELU_I_\d+ record queued$/,
      );

      const after = await listing(restored);
      const byTitle = (title: string) => after.find((d) => d.name === title)!;
      for (const [key, title] of [
        ['old', 'Before the backup'],
        ['new', 'After the backup'],
        ['acc', 'PD-OMICS imaging'],
        ['down', 'While the catalog was down'],
      ]) {
        const dataset = byTitle(title);
        const record = await recordWhen(
          apps,
          ids[key],
          (r) => r.catalog?.state === 'registered' && r.catalog.accession === dataset.external_id,
          `its record names ${dataset.external_id}`,
        );
        expect(dataset.storages.filter((s) => s.platform === 'lcsb-atlas')).toEqual([
          expect.objectContaining({ location: record.path }),
        ]);
        // One transfer per import, never two.
        expect(dataset.transfers.filter((t) => t.transfer_details.includes(ids[key]))).toHaveLength(
          1,
        );
      }

      // Idempotent: a second run adds nothing, queues nothing, and the catalog reads the same.
      const second = await reregister();
      expect({ code: second.code, summary: second.summary }).toEqual({
        code: 0,
        summary: summaryOf({ datasets: 4, unchanged: 4 }),
      });
      expect(await listing(restored)).toEqual(after);
    },
    4 * PROCESS_START_MS,
  );

  it(
    'names a catalog it cannot reach, and exits 1 (run it again)',
    async () => {
      const { code, summary, lines } = await (async () => {
        const saved = env.CATALOG_URL;
        env.CATALOG_URL = 'http://127.0.0.1:1';
        try {
          return await reregister('--no-queue');
        } finally {
          env.CATALOG_URL = saved;
        }
      })();
      expect({ code, unavailable: summary?.unavailable }).toEqual({ code: 1, unavailable: 4 });
      expect(lines[0]).toMatch(/^unavailable +\S+ catalog unreachable/);
    },
    PROCESS_START_MS,
  );

  it(
    'leaves a record whose registration job has not run yet to that job (record running)',
    async () => {
      // The outbox holds its jobs (a worker busy elsewhere, a queue paused by the operator):
      // one more import publishes and its registration waits.
      const outbox = apps.worker.get<Queue>(getQueueToken(STORAGE_REGISTRATION_QUEUE));
      await outbox.pause();
      try {
        ids.late = await importDataset(apps, 'DS-LATE');
        expect((await importRecord(apps, ids.late)).catalog?.state).toBe('pending');
        const jobId = storageRegistrationJobId(ids.late);
        expect(await outbox.getJobState(jobId)).toMatch(/^(waiting|paused)$/);

        const run = await reregister();
        expect({ code: run.code, summary: run.summary }).toEqual({
          code: 0,
          summary: summaryOf({ datasets: 5, added: 1, unchanged: 4 }),
        });
        const late = run.lines.find((l) => l.includes('/DS-LATE'));
        expect(late).toMatch(/^added +\S+ ELU_I_\d+ record running$/);
        // The job still waits, untouched: the record is still its job's to write.
        expect(await outbox.getJobState(jobId)).toMatch(/^(waiting|paused)$/);
        expect((await importRecord(apps, ids.late)).catalog?.state).toBe('pending');

        // The job runs once the outbox does, and names what reregister registered.
        await outbox.resume();
        const accession = late!.split(/ +/)[2];
        await recordWhen(
          apps,
          ids.late,
          (r) => r.catalog?.state === 'registered' && r.catalog.accession === accession,
          `registered as ${accession}`,
        );
        const dataset = (await listing(restored)).find(
          (d) => d.name === 'Published while the outbox waits',
        )!;
        expect(dataset.external_id).toBe(accession);
        expect(dataset.transfers.filter((t) => t.transfer_details.includes(ids.late))).toHaveLength(
          1,
        );
      } finally {
        await outbox.resume();
      }
    },
    2 * PROCESS_START_MS,
  );

  it(
    'registers from storage alone when the queue lost its import records (record none), and queues nothing',
    async () => {
      // The queue lost (a Redis without persistence restarted): no import job is kept.
      const imports = apps.api.get<Queue>(getQueueToken(IMPORTS_QUEUE));
      await imports.obliterate({ force: true });
      const outbox = apps.worker.get<Queue>(getQueueToken(STORAGE_REGISTRATION_QUEUE));
      const outboxBefore = await outbox.getJobCounts();

      const run = await reregister();
      expect({ code: run.code, summary: run.summary }).toEqual({
        code: 0,
        summary: summaryOf({ datasets: 5, unchanged: 5 }),
      });
      expect(run.lines).toHaveLength(5);
      for (const line of run.lines) expect(line).toMatch(/^unchanged +\S+ ELU_I_\d+ record none$/);
      expect(await outbox.getJobCounts()).toEqual(outboxBefore);
    },
    PROCESS_START_MS,
  );
});
