import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { generateApiKey } from '@app/auth';
import {
  queueEnv,
  startProvisionerApps,
  type ProvisionerTestApps,
  type QueueBackendChoice,
} from '../../../test/support/provisioner-app';
import { testServices } from '../../../test/support/test-services';
import { until } from '../../../test/support/wait';
import { TrailEmitter } from '../src/trail/trail-emitter';
import { TRAIL_QUEUE, TrailJobName, type TrailEvent } from '../src/trail/trail.queue';

const backends: QueueBackendChoice[] = testServices().redisUrl
  ? ['redis', 'postgres']
  : ['postgres'];

/** The longest wait the setting allows: a delivery that did not wait cannot be mistaken for one. */
const WAIT_MS = 10_000;

/** One `POST /api/trail/events` as the stub catalog received it. */
interface Received {
  at: number;
  ids: string[];
}

/**
 * A stand-in for the catalog's `POST /api/trail/events` (as
 * apps/catalog-api/src/audit/audit-events.controller.ts answers it: every event recorded, a
 * count of each): it records when each request came and the events' ids, in order.
 */
function stubCatalog(received: Received[]): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const { events } = JSON.parse(Buffer.concat(chunks).toString()) as { events: TrailEvent[] };
      received.push({ at: Date.now(), ids: events.map((e) => e.id) });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ recorded: events.length, already: 0 }));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/**
 * The trail worker waits TRAIL_BATCH_WAIT_MS from a head's queueing before it delivers it with
 * the jobs queued behind it meanwhile (docs/decisions/provisioner-trail-batch-wait.md), and a
 * head older than that (a backlog) goes at once. Real queues on both backends, the API and a
 * worker in this process, a stub catalog.
 */
describe.each(backends)('trail delivery waits for the events behind a new head (%s backend)', (backend) => {
  let apps: ProvisionerTestApps;
  let catalog: Server;
  const received: Received[] = [];

  beforeAll(async () => {
    catalog = await stubCatalog(received);
    apps = await startProvisionerApps({
      ...(await queueEnv(backend)),
      CATALOG_URL: `http://127.0.0.1:${(catalog.address() as AddressInfo).port}`,
      CATALOG_API_KEY: generateApiKey(48),
      TRAIL_BATCH_WAIT_MS: String(WAIT_MS),
    });
  });

  afterAll(async () => {
    await apps?.close();
    catalog?.closeAllConnections();
    await new Promise((r) => catalog?.close(r));
  });

  it('events emitted one by one within the wait: one request, in order, not before the wait', async () => {
    const emitter = apps.api.get(TrailEmitter);
    const started = Date.now();
    const ids: string[] = [];
    // Each emit awaited: a write (a job) of its own, as separate decisions make them.
    for (let n = 0; n < 5; n++) {
      const id = randomUUID();
      ids.push(id);
      await emitter.emit({ id, type: 'drs_object.allow', object_id: `P~S~DS~${n}`, subject: 'r' });
    }
    await until(async () => received.length > 0, 'the events delivered', 3 * WAIT_MS, 100);
    expect(received).toHaveLength(1);
    expect(received[0].ids).toEqual(ids);
    // The head's time is set when it is queued, after `started`.
    expect(received[0].at - started).toBeGreaterThanOrEqual(WAIT_MS - 50);
  });

  it('a head queued longer ago than the wait (a backlog) is delivered at once', async () => {
    received.length = 0;
    const queue = apps.api.get<Queue>(getQueueToken(TRAIL_QUEUE));
    const id = randomUUID();
    const added = Date.now();
    // As a job left waiting through an outage is: queued a minute ago.
    await queue.add(
      TrailJobName.Report,
      { id, type: 'drs_object.allow', occurred_at: new Date(added - 60_000).toISOString(), object_id: 'P~S~DS~old' },
      { jobId: id, timestamp: added - 60_000 },
    );
    // Well before the wait would end.
    await until(async () => received.length > 0, 'the old event delivered', WAIT_MS / 2, 50);
    expect(received[0].ids).toEqual([id]);
  });
});
