import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { generateApiKey, hashApiKey } from '@app/auth';
import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { startCatalogApp, type CatalogTestApp } from '../support/catalog-app';
import {
  queueEnv,
  startProvisionerApps,
  type ProvisionerTestApps,
} from '../support/provisioner-app';
import { until } from '../support/wait';
import { AuditTrailService } from '../../apps/catalog-api/src/audit/audit-trail.service';
import { TrailEmitter } from '../../apps/provisioner/src/trail/trail-emitter';
import {
  TRAIL_BATCH_MAX,
  TRAIL_QUEUE,
  TrailJobName,
  trailEventsJobId,
  type TrailEvent,
  type TrailEventsData,
} from '../../apps/provisioner/src/trail/trail.queue';

const REGISTRATION_KEY = generateApiKey(48);
const EVENTS = 1200;

/**
 * The outbox delivers in batches (issue 59, item 5): the 1,200 events of one emit are one job,
 * and reach the catalog in a few requests of at most TRAIL_BATCH_MAX, in the order emitted,
 * each once, although the catalog's answer to the first batch is lost (a gate in front of it
 * forwards the request, lets the catalog commit, and drops the connection): the job is
 * delivered again and the catalog skips every event it already holds. Jobs of one event (the
 * shape earlier versions wrote) and of many are delivered alike, in the queue's order.
 */
describe('the trail outbox delivers in batches, in order, once each', () => {
  let catalog: CatalogTestApp;
  let apps: ProvisionerTestApps;
  let gate: Server;
  const batches: { size: number; answered: boolean }[] = [];

  afterAll(async () => {
    await apps?.close();
    gate?.closeAllConnections();
    await new Promise((r) => gate?.close(r));
    await catalog?.close();
  });

  it('1,200 events of one emit: one job, a few requests, the first answer lost, each event once and in order', async () => {
    catalog = await startCatalogApp({ REGISTRATION_API_KEY_SHA256: hashApiKey(REGISTRATION_KEY) });
    await catalog.app.listen(0, '127.0.0.1');
    const catalogPort = (catalog.server.address() as AddressInfo).port;
    gate = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const size = (JSON.parse(body.toString()) as { events: unknown[] }).events.length;
        void fetch(`http://127.0.0.1:${catalogPort}${req.url}`, {
          method: req.method,
          headers: { 'content-type': 'application/json', 'x-api-key': REGISTRATION_KEY },
          body,
        }).then(async (answer) => {
          const text = await answer.text();
          const lost = batches.length === 0;
          batches.push({ size, answered: !lost });
          // The catalog committed; the worker never hears it.
          if (lost) return void res.socket?.destroy();
          res.writeHead(answer.status, { 'content-type': 'application/json' });
          res.end(text);
        });
      });
    }).listen(0, '127.0.0.1');
    await new Promise((r) => gate.once('listening', r));

    apps = await startProvisionerApps({
      ...(await queueEnv()),
      CATALOG_URL: `http://127.0.0.1:${(gate.address() as AddressInfo).port}`,
      CATALOG_API_KEY: REGISTRATION_KEY,
      CATALOG_RETRY_DELAY_MS: '100',
    });
    // Paused for every worker: the events queue up behind one another.
    const queue = apps.worker.get<Queue>(getQueueToken(TRAIL_QUEUE));
    await queue.pause();
    const ids = Array.from({ length: EVENTS }, () => randomUUID());
    await apps.api.get(TrailEmitter).emit(
      ids.map((id, n) => ({
        id,
        type: 'drs_object.serve' as const,
        object_id: `P~S~D~${n}`,
        subject: 'batch-reader',
        range_start: n,
        bytes: 1,
      })),
    );
    // One job holding them all, in the order emitted.
    expect(await queue.count()).toBe(1);
    const [job] = await queue.getWaiting(0, -1);
    expect(job.name).toBe(TrailJobName.ReportEvents);
    expect(job.id).toMatch(/^events-1200-[0-9a-f]{32}$/);
    expect((job.data as TrailEventsData).events.map((e) => e.id)).toEqual(ids);
    await queue.resume();

    const drained = async () => {
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      return Object.values(counts).every((n) => n === 0);
    };
    await until(drained, 'the outbox drained', 60_000, 50);

    const rows = await catalog.dataSource.query<{ event_id: string; object_id: string }[]>(
      `SELECT event_id::text, object_id FROM audit_log WHERE object_type = 'drs_object' ORDER BY id`,
    );
    // Each event once, in the order queued, although the first batch went twice.
    expect(rows.map((r) => r.event_id)).toEqual(ids);
    expect(rows.map((r) => r.object_id)).toEqual(ids.map((_id, n) => `P~S~D~${n}`));
    expect(batches[0]).toEqual({ size: TRAIL_BATCH_MAX, answered: false });
    expect(batches[1]).toEqual({ size: TRAIL_BATCH_MAX, answered: true });
    // Batches, not one request per event: 1,200 in three, plus the one repeated.
    expect(batches.map((b) => b.size)).toEqual([500, 500, 500, 200]);
    // The one job, kept completed.
    expect(await queue.getCompletedCount()).toBe(1);
    expect(await queue.getFailedCount()).toBe(0);
    expect(await catalog.app.get(AuditTrailService).verify()).toMatchObject({ ok: true });
  }, 120_000);

  it('a batch the catalog refuses (one malformed event): the others land in order, that one fails alone', async () => {
    const queue = apps.worker.get<Queue>(getQueueToken(TRAIL_QUEUE));
    const before = await catalog.dataSource.query<{ seq: string }[]>(
      'SELECT seq::text FROM audit_log_head',
    );
    const good = Array.from({ length: 6 }, () => randomUUID());
    const bad = randomUUID();
    const job = (id: string, n: number) => ({
      name: 'report',
      data: {
        id,
        type: 'drs_object.allow',
        occurred_at: new Date().toISOString(),
        object_id: `O-${n}`,
      },
      opts: { jobId: id, removeOnFail: false },
    });
    await queue.pause();
    await queue.addBulk([
      ...good.slice(0, 3).map(job),
      // No object id: the catalog refuses the report holding it (400).
      {
        name: 'report',
        data: { id: bad, type: 'drs_object.allow', occurred_at: 'yesterday' },
        opts: { jobId: bad, removeOnFail: false },
      },
      ...good.slice(3).map((id, n) => job(id, n + 3)),
    ]);
    const requests = batches.length;
    await queue.resume();
    const drained = async () => {
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      return Object.values(counts).every((n) => n === 0);
    };
    await until(drained, 'the outbox drained', 30_000, 50);
    const rows = await catalog.dataSource.query<{ event_id: string }[]>(
      'SELECT event_id::text FROM audit_log WHERE id > $1 ORDER BY id',
      [before[0].seq],
    );
    expect(rows.map((r) => r.event_id)).toEqual(good);
    expect((await queue.getJob(bad))?.failedReason).toMatch(/./);
    expect(await queue.getFailedCount()).toBe(1);
    // The batch of seven refused, then one at a time past the malformed one.
    expect(batches.slice(requests).map((b) => b.size)).toEqual([7, 1, 1, 1, 1, 1, 1, 1]);
  }, 60_000);

  it('jobs of one event (as earlier versions wrote) and of many, mixed: delivered in order; a many-event job with a malformed event fails alone, its others landed', async () => {
    const queue = apps.worker.get<Queue>(getQueueToken(TRAIL_QUEUE));
    const before = await catalog.dataSource.query<{ seq: string }[]>(
      'SELECT seq::text FROM audit_log_head',
    );
    const event = (n: number): TrailEvent => ({
      id: randomUUID(),
      type: 'drs_object.allow',
      occurred_at: new Date().toISOString(),
      object_id: `M-${n}`,
    });
    const single = (one: TrailEvent) => ({
      name: TrailJobName.Report,
      data: one,
      opts: { jobId: one.id, removeOnFail: false },
    });
    const many = (events: TrailEvent[]) => ({
      name: TrailJobName.ReportEvents,
      data: { events },
      opts: { jobId: trailEventsJobId(events), removeOnFail: false },
    });
    const [a, b1, b2, b3, c, d1, d3, e] = Array.from({ length: 8 }, (_x, n) => event(n));
    // No object id: the catalog refuses any report holding it (400).
    const d2 = {
      id: randomUUID(),
      type: 'drs_object.allow',
      occurred_at: 'yesterday',
    } as TrailEvent;
    const broken = many([d1, d2, d3]);
    await queue.pause();
    await queue.addBulk([single(a), many([b1, b2, b3]), single(c), broken, single(e)]);
    const requests = batches.length;
    const failedBefore = await queue.getFailedCount();
    await queue.resume();
    const drained = async () => {
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      return Object.values(counts).every((n) => n === 0);
    };
    await until(drained, 'the outbox drained', 30_000, 50);
    const rows = await catalog.dataSource.query<{ event_id: string }[]>(
      'SELECT event_id::text FROM audit_log WHERE id > $1 ORDER BY id',
      [before[0].seq],
    );
    expect(rows.map((r) => r.event_id)).toEqual([a, b1, b2, b3, c, d1, d3, e].map((x) => x.id));
    expect(await queue.getFailedCount()).toBe(failedBefore + 1);
    expect((await queue.getJob(broken.opts.jobId))?.failedReason).toMatch(
      /^1 of the 3 events of trail job events-3-/,
    );
    // The nine refused together; then job by job; the broken job's events one by one.
    expect(batches.slice(requests).map((x) => x.size)).toEqual([9, 1, 3, 1, 3, 1, 1, 1, 1]);
  }, 60_000);
});
