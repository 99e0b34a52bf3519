import { createHash, generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import request from 'supertest';
import { generateApiKey, hashApiKey } from '@app/auth';
import { freePort } from '../support/app-process';
import { startCatalogApp } from '../support/catalog-app';
import { brokerPassport, catalogVisas, grantReader } from '../support/drs-reader';
import {
  startProvisionerApps,
  TEST_WRITE_KEY,
  type ProvisionerTestApps,
} from '../support/provisioner-app';
import { poll, until } from '../support/wait';
import { DemoCatalog, startDemoCatalog } from '../../apps/catalog-api/test/demo-catalog.fixture';
import { AuditTrailService } from '../../apps/catalog-api/src/audit/audit-trail.service';
import type { CatalogTestApp } from '../support/catalog-app';
import type { ImportRecord } from '../../apps/provisioner/src/imports/import-record';
import {
  TRAIL_QUEUE,
  TrailJobName,
  type TrailEventsData,
} from '../../apps/provisioner/src/trail/trail.queue';
import { DropzoneFixture, tempDir } from '../../apps/provisioner/test/support/dropzone-fixture';
import { dropzoneEnv, waitForImport } from '../../apps/provisioner/test/support/provisioner-e2e';

const REGISTRATION_KEY = generateApiKey(48);
const BROKER_KEY = generateApiKey(48);
const DRS = '/ga4gh/drs/v1';
const READER = 'sub-trail-reader';
const CONTENT = Buffer.from('0123456789'.repeat(100));
/** A bulk decision's objects: the DRS service's most per request (DRS_MAX_BULK_REQUEST_LENGTH). */
const BULK_FILES = Array.from({ length: 1000 }, (_x, n) => `f-${String(n).padStart(4, '0')}.txt`);

interface TrailRow {
  id: string;
  event_id: string;
  actor_kind: string;
  action: string;
  object_type: string;
  object_id: string;
  change: Record<string, unknown>;
}

/**
 * The provisioner's events in the catalog's trail (issue 59, item 1): a real catalog and a real
 * provisioner (API and worker, one queue). A DRS decision allowed, one refused, a byte range
 * read and an import each land once, in order, and the chain still verifies; with the catalog
 * stopped, a download still succeeds and its event lands once the catalog is back.
 */
describe('the provisioner reports to the catalog’s access trail through its outbox', () => {
  const dir = tempDir('e2e-trail');
  const dropzone = new DropzoneFixture(join(dir, 'dropzone'));
  let catalog: CatalogTestApp;
  let demo: DemoCatalog;
  let catalogEnv: Record<string, string>;
  let catalogPort: number;
  let apps: ProvisionerTestApps;
  const accession: Record<string, string> = {};
  const datasetId = (name: string) => `PD-OMICS~SUB-T~${name}`;
  const fileId = (name: string, path: string) =>
    `${datasetId(name)}~${createHash('sha256').update(path).digest('hex').slice(0, 20)}`;
  const api = () => request(apps.api.getHttpServer());

  const importDataset = async (name: string) => {
    const res = await api()
      .post('/datasets/dropzone/import')
      .set('X-API-Key', TEST_WRITE_KEY)
      .send({ dataset_id: name })
      .expect(202);
    await waitForImport(apps.api, res.body.id as string);
    return res.body.id as string;
  };
  const registered = (id: string) =>
    poll(
      async () => {
        const r = await api().get(`/imports/${id}`).set('X-API-Key', TEST_WRITE_KEY);
        const record = r.body as ImportRecord;
        return record.catalog?.state === 'registered' ? record.catalog.accession! : undefined;
      },
      `${id} registered`,
      30_000,
      50,
    );
  /** The reader's passport: the catalog's visas in a broker's JWT. */
  const passport = async () => brokerPassport(READER, await catalogVisas(catalog.server, READER));
  /** The provisioner's entries after position `after`, in trail order (by number, not text). */
  const reported = async (after: string): Promise<TrailRow[]> =>
    catalog.dataSource.query(
      `SELECT id::text, event_id::text, actor_kind, action, object_type, object_id, change
       FROM audit_log WHERE id > $1 AND object_type IN ('drs_object', 'import')
       ORDER BY audit_log.id`,
      [after],
    );
  const head = async () =>
    (await catalog.dataSource.query<{ seq: string }[]>('SELECT seq::text FROM audit_log_head'))[0]
      .seq;
  const trailQueue = () => apps.worker.get<Queue>(getQueueToken(TRAIL_QUEUE));
  /** Every queued event delivered (none waiting, delayed or being delivered). */
  const drained = async () => {
    const counts = await trailQueue().getJobCounts('waiting', 'active', 'delayed', 'prioritized');
    return Object.values(counts).every((n) => n === 0);
  };

  beforeAll(async () => {
    const pemPath = join(dir, 'visa-key.pem');
    writeFileSync(
      pemPath,
      generateKeyPairSync('rsa', { modulusLength: 2048 })
        .privateKey.export({ type: 'pkcs8', format: 'pem' })
        .toString(),
      { mode: 0o600 },
    );
    catalogPort = await freePort();
    const issuer = `http://127.0.0.1:${catalogPort}`;
    catalogEnv = {
      REGISTRATION_API_KEY_SHA256: hashApiKey(REGISTRATION_KEY),
      GA4GH_BROKER_API_KEY_SHA256: createHash('sha256').update(BROKER_KEY).digest('hex'),
      GA4GH_VISA_KEY_FILE: pemPath,
      CATALOG_SOURCE: issuer,
    };
    demo = await startDemoCatalog(catalogEnv);
    catalog = demo;
    await catalog.app.listen(catalogPort, '127.0.0.1');
    dropzone
      .submission('SUB-T', {
        project: 'PD-OMICS',
        datasets: ['DS-READ', 'DS-OTHER', 'DS-NEW', 'DS-BULK'],
      })
      .dataset('DS-READ', { submission: 'SUB-T', title: 'Read', files: { 'data.bin': CONTENT } })
      .dataset('DS-OTHER', { submission: 'SUB-T', title: 'Not granted', files: { 'o.txt': 'o' } })
      .dataset('DS-NEW', { submission: 'SUB-T', title: 'Imported later', files: { 'n.txt': 'n' } })
      .dataset('DS-BULK', {
        submission: 'SUB-T',
        title: 'Read in bulk',
        files: Object.fromEntries(BULK_FILES.map((path) => [path, path])),
      });
    const drsUrl = `http://127.0.0.1:${await freePort()}`;
    apps = await startProvisionerApps(
      await dropzoneEnv(dropzone, join(dir, 'storage'), {
        CATALOG_URL: issuer,
        CATALOG_API_KEY: REGISTRATION_KEY,
        CATALOG_RETRY_DELAY_MS: '100',
        DRS_PUBLIC_URL: drsUrl,
        DRS_VISA_ISSUER: issuer,
        DRS_CATALOG_BROKER_KEY: BROKER_KEY,
        // The grant check is remembered for the whole file: a download still succeeds while the
        // catalog is stopped (what the second case checks).
        DRS_GRANT_CHECK_SECONDS: '600',
      }),
    );
    await apps.api.listen(Number(new URL(drsUrl).port), '127.0.0.1');
    for (const name of ['DS-READ', 'DS-OTHER', 'DS-BULK']) {
      accession[name] = await registered(await importDataset(name));
    }
    await grantReader(
      catalog.dataSource,
      { subject: READER, username: 'trail-reader' },
      [accession['DS-READ'], accession['DS-OTHER'], accession['DS-BULK']],
      accession['DS-READ'],
    );
    await catalog.dataSource.query(
      `INSERT INTO accesses (dataset_id, user_id, status, granted_on)
       SELECT d.id, u.id, 'active', now()::date FROM datasets d, users u
       WHERE d.elu_accession = $1 AND u.oidc_id = $2`,
      [accession['DS-BULK'], READER],
    );
  }, 120_000);

  afterAll(async () => {
    await apps?.close();
    await catalog?.close();
  });

  let accessUrl: string;

  it('a decision allowed, one refused, a byte range read and an import: each once, in order, and the chain verifies', async () => {
    // The set-up's two imports are reported first: the entries of this case come after them.
    await until(drained, 'the set-up’s events delivered', 15_000, 50);
    const before = await head();
    const own = await passport();
    const allowedId = fileId('DS-READ', 'data.bin');
    const allowed = await api()
      .post(`${DRS}/objects/${allowedId}/access/https`)
      .send({ passports: [own] })
      .expect(200);
    accessUrl = allowed.body.url as string;
    const refusedId = fileId('DS-OTHER', 'o.txt');
    await api()
      .post(`${DRS}/objects/${refusedId}/access/https`)
      .send({ passports: [own] })
      .expect(403);
    const read = await fetch(accessUrl, { headers: { range: 'bytes=100-199' } });
    expect(read.status).toBe(206);
    expect(Buffer.from(await read.arrayBuffer())).toEqual(CONTENT.subarray(100, 200));
    const importId = await importDataset('DS-NEW');

    const rows = await poll(
      async () => {
        const found = await reported(before);
        return found.length >= 4 ? found : undefined;
      },
      'the four events in the trail',
      15_000,
      50,
    );
    await until(drained, 'the outbox drained', 15_000, 50);
    const all = await reported(before);
    expect(all).toHaveLength(4);
    expect(all.map((r) => `${r.object_type}.${r.action}`)).toEqual([
      'drs_object.allow',
      'drs_object.refuse',
      'drs_object.serve',
      'import.publish',
    ]);
    expect(new Set(all.map((r) => r.event_id)).size).toBe(4);
    const [allow, refuse, serve, publish] = rows;
    // The registration key's holder reported them.
    expect(new Set(all.map((r) => r.actor_kind))).toEqual(new Set(['registrar']));
    expect(allow).toMatchObject({
      object_id: allowedId,
      change: { subject: READER, dataset: accession['DS-READ'] },
    });
    // The visa that allowed it is one the catalog signed (and chained when it did).
    const visaIssued = await catalog.dataSource.query(
      `SELECT 1 FROM audit_log WHERE object_type = 'visa' AND object_id = $1`,
      [allow.change.visa],
    );
    expect(visaIssued).toHaveLength(1);
    expect(refuse).toMatchObject({ object_id: refusedId, change: { subject: READER } });
    expect(refuse.change.reason).toMatch(/^not_granted: /);
    expect(serve).toMatchObject({
      object_id: allowedId,
      change: { subject: READER, dataset: accession['DS-READ'], range_start: 100, bytes: 100 },
    });
    expect(publish).toMatchObject({ object_id: importId });
    expect(publish.change.location).toEqual(expect.stringContaining('DS-NEW'));

    const check = await catalog.app.get(AuditTrailService).verify();
    expect(check).toMatchObject({ ok: true });
  }, 60_000);

  it('a bulk decision over 1,000 objects: one job holding its 1,000 events, delivered in order, each once', async () => {
    await until(drained, 'the earlier events delivered', 15_000, 50);
    const before = await head();
    const ids = BULK_FILES.map((path) => fileId('DS-BULK', path));
    const queue = trailQueue();
    // Held in the queue while the request is answered: what it wrote is looked at first.
    await queue.pause();
    try {
      const res = await api()
        .post(`${DRS}/objects`)
        .send({ bulk_object_ids: ids, passports: [await passport()] })
        .expect(200);
      expect(res.body.resolved_drs_object).toHaveLength(1000);
      expect(await queue.count()).toBe(1);
      const [job] = await queue.getWaiting(0, -1);
      expect(job.name).toBe(TrailJobName.ReportEvents);
      const events = (job.data as TrailEventsData).events;
      expect(events.map((e) => e.object_id)).toEqual(ids);
      expect(new Set(events.map((e) => e.type))).toEqual(new Set(['drs_object.allow']));
    } finally {
      await queue.resume();
    }
    await until(drained, 'the bulk decision delivered', 30_000, 50);
    const rows = await reported(before);
    expect(rows.map((r) => r.object_id)).toEqual(ids);
    expect(new Set(rows.map((r) => r.event_id)).size).toBe(1000);
    expect(rows[0]).toMatchObject({
      action: 'allow',
      change: { subject: READER, dataset: accession['DS-BULK'] },
    });
    expect(await catalog.app.get(AuditTrailService).verify()).toMatchObject({ ok: true });
  }, 60_000);

  it('with the catalog stopped, a download still succeeds; its event lands once the catalog is back', async () => {
    await until(drained, 'the earlier events delivered', 15_000, 50);
    const before = await head();
    await catalog.close();
    const whole = await fetch(accessUrl);
    expect(whole.status).toBe(200);
    expect(Buffer.from(await whole.arrayBuffer())).toEqual(CONTENT);
    // A delivery failed: the queue is paused with its event at the head.
    await until(
      async () => (await trailQueue().getRateLimitTtl()) > 0,
      'a delivery to fail and pause the outbox',
      15_000,
      20,
    );
    // Held in the outbox. Polled: beside `stress`, one read in five, taken just as the failed
    // delivery set the rate limit, counted the job in none of these states, and the next read
    // found it waiting. That it is delivered, once, is what the rest of the case checks.
    await until(async () => !(await drained()), 'the event held in the outbox', 5_000, 20);

    catalog = await startCatalogApp(catalogEnv, demo.databaseUrl);
    await catalog.app.listen(catalogPort, '127.0.0.1');
    const rows = await poll(
      async () => {
        const found = await reported(before);
        return found.length > 0 ? found : undefined;
      },
      'the download’s event in the trail',
      30_000,
      50,
    );
    await until(drained, 'the outbox drained', 15_000, 50);
    expect(await reported(before)).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      object_type: 'drs_object',
      action: 'serve',
      change: { subject: READER, range_start: 0, bytes: CONTENT.length },
    });
    expect(await catalog.app.get(AuditTrailService).verify()).toMatchObject({ ok: true });
  }, 60_000);
});
