import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { generateApiKey, hashApiKey } from '@app/auth';
import { getQueueToken } from '@nestjs/bullmq';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Queue } from 'bullmq';
import { startCatalogApp, type CatalogTestApp } from '../support/catalog-app';
import { provisionerTestSettings, queueEnv, type QueueBackendChoice } from '../support/provisioner-app';
import { until } from '../support/wait';
import { AuditTrailService } from '../../apps/catalog-api/src/audit/audit-trail.service';
import { createProvisionerWorkerApp } from '../../apps/provisioner/src/worker-app';
import { TrailEmitter } from '../../apps/provisioner/src/trail/trail-emitter';
import { TrailProcessor } from '../../apps/provisioner/src/trail/trail.processor';
import { TRAIL_QUEUE } from '../../apps/provisioner/src/trail/trail.queue';

const REGISTRATION_KEY = generateApiKey(48);
/** The objects the events are about: a webhook's subject is `drs_object:<object id>`. */
const OBJECTS = 5;

/** What a gate does with the next requests it is sent, whichever worker sends them. */
type GateMode = { kind: 'forward' } | { kind: 'hold-next' } | { kind: 'fail'; left: number };

/**
 * The trail outbox with two worker replicas (issue 59, items 1 and 2): two provisioner workers,
 * each its own app with its own queue connections, as two pods would be, deliver one stream of
 * events to a real catalog, each through a gate of its own in front of it (which tells who
 * sent what, and can fail or swallow a request). The catalog's chain holds every event once, in
 * the order queued (so in order per object too: a webhook subject, whose messages the catalog
 * sends in the chain's order): while both take jobs at once, while the catalog fails for a while, and when the
 * worker delivering dies mid-request (its request never reaches the catalog) while events keep
 * coming. On both queue backends.
 */
// 'redis' runs on the PostgreSQL backend too where the run has no Redis (queueEnv).
describe.each<QueueBackendChoice>(['redis', 'postgres'])(
  'two trail workers deliver one stream in order, once each (%s queue backend)',
  (backend) => {
    let catalog: CatalogTestApp;
    let catalogPort: number;
    const gates = new Map<string, Server>();
    const workers = new Map<string, NestExpressApplication>();
    const held: ServerResponse[] = [];
    const requests: { worker: string; size: number; outcome: string }[] = [];
    let mode: GateMode = { kind: 'forward' };
    let queue: Queue;
    let emitted = 0;
    /** The worker whose emitter queues the events (the survivor, once one is dead). */
    let producer = 'a';
    const tag = `${backend}-${randomUUID().slice(0, 8)}`;

    const gate = (worker: string): Server =>
      createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const body = Buffer.concat(chunks);
          const size = (JSON.parse(body.toString()) as { events: unknown[] }).events.length;
          if (mode.kind === 'hold-next') {
            // The worker dies writing it: the catalog never sees it, and no answer ever comes.
            mode = { kind: 'forward' };
            held.push(res);
            requests.push({ worker, size, outcome: 'held' });
            return;
          }
          if (mode.kind === 'fail' && mode.left > 0) {
            mode.left -= 1;
            requests.push({ worker, size, outcome: '503' });
            res.writeHead(503, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ description: 'catalog down for the test' }));
            return;
          }
          void fetch(`http://127.0.0.1:${catalogPort}${req.url}`, {
            method: req.method,
            headers: { 'content-type': 'application/json', 'x-api-key': REGISTRATION_KEY },
            body,
          })
            .then(async (answer) => {
              const text = await answer.text();
              requests.push({ worker, size, outcome: String(answer.status) });
              res.writeHead(answer.status, { 'content-type': 'application/json' });
              res.end(text);
            })
            .catch(() => res.socket?.destroy());
        });
      }).listen(0, '127.0.0.1');

    /** Queues `count` events in chunks of `chunk`, one after another; returns their ids. */
    const emit = async (count: number, chunk: number): Promise<string[]> => {
      const emitter = workers.get(producer)!.get(TrailEmitter);
      const ids: string[] = [];
      for (let done = 0; done < count; done += chunk) {
        const events = Array.from({ length: Math.min(chunk, count - done) }, () => {
          const n = emitted++;
          const id = randomUUID();
          ids.push(id);
          return {
            id,
            type: 'drs_object.serve' as const,
            object_id: `${tag}~${n % OBJECTS}`,
            subject: `reader-${n % 3}`,
            range_start: n,
            bytes: 1,
          };
        });
        await emitter.emit(events);
      }
      return ids;
    };

    const drained = async () => {
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      return Object.values(counts).every((n) => n === 0);
    };

    /** Every event of this backend's run in the catalog's chain, in its order. */
    const chained = () =>
      catalog.dataSource.query<{ event_id: string; object_id: string }[]>(
        `SELECT event_id::text, object_id FROM audit_log
         WHERE object_type = 'drs_object' AND object_id LIKE $1 ORDER BY id`,
        [`${tag}~%`],
      );

    /** The chain holds exactly `ids` (the run's events so far), once each, in their order. */
    const expectChainedInOrder = async (ids: string[]) => {
      const rows = await chained();
      const got = rows.map((r) => r.event_id);
      expect(new Set(got).size).toBe(got.length);
      const chainedIds = new Set(got);
      expect(ids.filter((id) => !chainedIds.has(id))).toEqual([]);
      // Per object (what a webhook subscriber sees), then as a whole.
      const perObject = (objectOf: (id: string, n: number) => string, list: string[]) =>
        Array.from({ length: OBJECTS }, (_x, o) =>
          list.filter((id, n) => objectOf(id, n) === `${tag}~${o}`),
        );
      expect(perObject((_id, n) => rows[n].object_id, got)).toEqual(
        perObject((_id, n) => `${tag}~${n % OBJECTS}`, ids),
      );
      expect(got).toEqual(ids);
    };

    beforeAll(async () => {
      catalog = await startCatalogApp({ REGISTRATION_API_KEY_SHA256: hashApiKey(REGISTRATION_KEY) });
      await catalog.app.listen(0, '127.0.0.1');
      catalogPort = (catalog.server.address() as AddressInfo).port;
      const env = await queueEnv(backend === 'postgres' ? 'postgres' : undefined);
      for (const name of ['a', 'b']) {
        const server = gate(name);
        await new Promise((r) => server.once('listening', r));
        gates.set(name, server);
        const settings = provisionerTestSettings({
          ...env,
          CATALOG_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          CATALOG_API_KEY: REGISTRATION_KEY,
          CATALOG_RETRY_DELAY_MS: '100',
          // A dead worker's claim lapses in seconds; a request is never given up meanwhile.
          IMPORT_LOCK_MS: '3000',
          CATALOG_TIMEOUT_MS: '600000',
        });
        const worker = await createProvisionerWorkerApp(settings);
        await worker.init();
        workers.set(name, worker);
      }
      queue = workers.get('a')!.get<Queue>(getQueueToken(TRAIL_QUEUE));
    }, 120_000);

    afterAll(async () => {
      held.forEach((res) => res.socket?.destroy());
      for (const worker of workers.values()) await worker.close().catch(() => undefined);
      for (const server of gates.values()) {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      }
      await catalog?.close();
    });

    let all: string[] = [];

    it('a backlog both take at once, then a stream: one order, each event once', async () => {
      // Paused for every worker: the backlog queues up, and both start on it together.
      await queue.pause();
      all = await emit(1000, 1000);
      await queue.resume();
      all.push(...(await emit(500, 25)));
      await until(drained, 'the outbox drained', 60_000, 50);
      await expectChainedInOrder(all);
      expect(await queue.getFailedCount()).toBe(0);
    }, 90_000);

    it('the catalog failing for a while: delivery pauses for both, nothing passes the first', async () => {
      mode = { kind: 'fail', left: 3 };
      await queue.pause();
      all.push(...(await emit(300, 300)));
      await queue.resume();
      all.push(...(await emit(200, 20)));
      await until(drained, 'the outbox drained', 60_000, 50);
      expect(requests.filter((r) => r.outcome === '503')).toHaveLength(3);
      await expectChainedInOrder(all);
      expect(await queue.getFailedCount()).toBe(0);
    }, 90_000);

    it('the worker delivering dies mid-request: the other delivers its events first, then the rest', async () => {
      mode = { kind: 'hold-next' };
      await queue.pause();
      all.push(...(await emit(300, 300)));
      await queue.resume();
      await until(() => held.length === 1, 'a delivery swallowed', 30_000, 20);
      const dead = requests.find((r) => r.outcome === 'held')!.worker;
      // Killed: it renews no lock and takes no job again; its request hangs, unanswered.
      await workers.get(dead)!.get(TrailProcessor).worker.close(true);
      producer = dead === 'a' ? 'b' : 'a';
      queue = workers.get(producer)!.get<Queue>(getQueueToken(TRAIL_QUEUE));
      // Events keep coming while the dead worker's claim lapses.
      all.push(...(await emit(200, 10)));
      await until(drained, 'the outbox drained', 60_000, 50);
      await expectChainedInOrder(all);
      expect(await queue.getFailedCount()).toBe(0);
      expect(await catalog.app.get(AuditTrailService).verify()).toMatchObject({ ok: true });
    }, 90_000);
  },
);
