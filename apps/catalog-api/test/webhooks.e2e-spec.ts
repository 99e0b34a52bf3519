import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { until } from '../../../test/support/wait';
import { runCli } from '../src/cli/run-cli';
import request from 'supertest';
import { DemoCatalog, KeyName, KEYS, startDemoCatalog } from './demo-catalog.fixture';
import { startCatalogApp, type CatalogTestApp } from '../../../test/support/catalog-app';
import { CatalogVersionTracker } from '../src/catalog-version/catalog-version-tracker';
import { WebhookDispatcher } from '../src/webhooks/webhook-dispatcher';
import { WebhooksRepository } from '../src/webhooks/webhooks.repository';

interface Received {
  path: string;
  id: string;
  body: { type: string; timestamp: string; data: { seq: number; object: { id: string } } };
}

/**
 * A receiver as a subscriber writes one: it verifies every message with the standardwebhooks
 * library (the reference implementation of the Standard Webhooks spec) before accepting it.
 * `answer` decides the reply per path; a message whose signature fails is answered 400.
 */
async function startReceiver(secrets: Record<string, string>) {
  const received: Received[] = [];
  const refusedSignatures: string[] = [];
  let answer: (path: string, res: ServerResponse) => boolean = () => false;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      if (answer(path, res)) return;
      const payload = Buffer.concat(chunks).toString('utf8');
      try {
        const body = new Webhook(secrets[path]).verify(payload, {
          'webhook-id': String(req.headers['webhook-id']),
          'webhook-timestamp': String(req.headers['webhook-timestamp']),
          'webhook-signature': String(req.headers['webhook-signature']),
        }) as Received['body'];
        received.push({ path, id: String(req.headers['webhook-id']), body });
        res.writeHead(204).end();
      } catch {
        refusedSignatures.push(path);
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    received,
    refusedSignatures,
    answerWith(fn: typeof answer) {
      answer = fn;
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

const schema = JSON.parse(
  readFileSync(join(__dirname, '../../../docs/events/trail-event.schema.json'), 'utf8'),
) as object;

describe('webhook subscriptions: the trail as Standard Webhooks messages', () => {
  let c: DemoCatalog;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const secrets: Record<string, string> = {};
  const given = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const validate = addFormats(new Ajv2020({ allErrors: true, strict: false })).compile(schema);

  beforeAll(async () => {
    receiver = await startReceiver(secrets);
    c = await startDemoCatalog({
      WEBHOOK_DELIVERY: 'true',
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_POLL_MS: '20',
      WEBHOOK_RETRY_SECONDS: '0.1,0.1',
      WEBHOOK_TIMEOUT_MS: '500',
    });
  });
  afterAll(async () => {
    await c.close();
    await receiver.close();
  });

  const insertEntry = (objectType: string, objectId: string, action = 'update') =>
    c.dataSource.query(
      `INSERT INTO audit_log (actor_kind, action, object_type, object_id) VALUES ('system', $1, $2, $3)`,
      [action, objectType, objectId],
    );
  const post = (path: string, key: KeyName) =>
    request(c.server).post(path).set('X-API-Key', KEYS[key]);
  const of = (path: string) => receiver.received.filter((r) => r.path === path);

  it('admin only: other keys are refused, secrets never listed', async () => {
    await post('/api/admin/subscriptions', 'custodian')
      .send({ url: `${receiver.base}/x` })
      .expect(403);
    await c.get('/api/admin/subscriptions', 'steward').expect(403);
    const bad = await post('/api/admin/subscriptions', 'global')
      .send({ url: 'ftp://x', events: ['Not A Type'], secret: 'plain' })
      .expect(400);
    expect(bad.body.more.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'events[0]',
      'secret',
      'url',
    ]);
  });

  it('delivers every event, signed, in trail order, and only the types asked for', async () => {
    const all = await post('/api/admin/subscriptions', 'global')
      .send({ url: `${receiver.base}/all` })
      .expect(201);
    expect(all.body.secret).toMatch(/^whsec_/);
    secrets['/all'] = all.body.secret as string;
    const grants = await post('/api/admin/subscriptions', 'global')
      .send({ url: `${receiver.base}/grants`, events: ['access.grant'], secret: given })
      .expect(201);
    expect(grants.body.secret).toBeUndefined();
    secrets['/grants'] = given;
    const listed = await c.get('/api/admin/subscriptions', 'global').expect(200);
    expect(JSON.stringify(listed.body)).not.toContain('whsec_');

    for (let n = 0; n < 5; n++) await insertEntry('dataset', 'd-1');
    await insertEntry('access', 'a-1', 'grant');
    await post('/api/admin/grants', 'global')
      .send({
        user: 'roy.blue',
        permission: 'protected',
        object_type: 'project',
        object: 'EPIC-DREM',
      })
      .expect(201);
    // Each subscription's own creation is an event too, its first.
    await until(() => of('/all').length === 9, 'nine messages at /all');
    await until(() => of('/grants').length === 1, 'one message at /grants');

    expect(
      of('/all')
        .map((r) => r.body.type)
        .sort(),
    ).toEqual([
      'access.grant',
      ...Array(5).fill('dataset.update'),
      'project.grant',
      'subscription.create',
      'subscription.create',
    ]);
    // In trail order per subject (`<object type>:<object id>`); subjects do not wait for each other.
    const bySubject = new Map<string, number[]>();
    for (const r of of('/all')) {
      const key = `${r.body.type.split('.')[0]}:${r.body.data.object.id}`;
      bySubject.set(key, [...(bySubject.get(key) ?? []), r.body.data.seq]);
    }
    for (const seqs of bySubject.values()) expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(bySubject.get('dataset:d-1')).toHaveLength(5);
    expect(of('/grants')[0].body).toMatchObject({
      type: 'access.grant',
      data: { object: { id: 'a-1' } },
    });
    for (const r of receiver.received) {
      expect({ valid: validate(r.body), errors: validate.errors }).toEqual({
        valid: true,
        errors: null,
      });
    }
    expect(receiver.refusedSignatures).toEqual([]);
  });

  it('retries with backoff, then dead-letters; the next event of that subject goes once it is dead; replay delivers', async () => {
    let failing = true;
    receiver.answerWith((path, res) => {
      if (path !== '/all' || !failing) return false;
      res.writeHead(503).end();
      return true;
    });
    await insertEntry('dataset', 'stuck');
    await until(
      async () =>
        (await c.get('/api/admin/subscriptions', 'global')).body.results.length > 0 &&
        (
          await c.dataSource.query<{ n: number }[]>(
            `SELECT count(*)::int AS n FROM webhook_deliveries WHERE state = 'dead'`,
          )
        )[0].n === 1,
      'the message to be dead-lettered after its retries',
    );
    const subscription = (await c.get('/api/admin/subscriptions', 'global')).body.results[0].id;
    const dead = await c
      .get(`/api/admin/subscriptions/${subscription}/dead-letters`, 'global')
      .expect(200);
    expect(dead.body.results).toEqual([
      expect.objectContaining({ subject: 'dataset:stuck', attempts: 3, last_error: 'HTTP 503' }),
    ]);
    failing = false;
    await insertEntry('dataset', 'stuck');
    await insertEntry('dataset', 'other');
    const about = (id: string) => of('/all').filter((r) => r.body.data.object.id === id);
    await until(() => about('stuck').length === 1 && about('other').length === 1, 'the next two');
    const replay = await post(
      `/api/admin/subscriptions/${subscription}/dead-letters/replay`,
      'global',
    )
      .send({})
      .expect(200);
    expect(replay.body).toEqual({ replayed: 1 });
    await until(() => about('stuck').length === 2, 'the replayed message');
    const [next, replayed] = about('stuck').map((r) => r.body.data.seq);
    expect(replayed).toBeLessThan(next);
    const dl = await c.get(`/api/admin/subscriptions/${subscription}/dead-letters`, 'global');
    expect(dl.body.results).toEqual([]);
    receiver.answerWith(() => false);
  });

  it('a receiver that never answers does not slow a grant', async () => {
    const hung: ServerResponse[] = [];
    receiver.answerWith((_path, res) => {
      hung.push(res);
      return true;
    });
    await insertEntry('dataset', 'slow');
    await until(() => hung.length > 0, 'the receiver to hold a message');
    // While the receiver holds the message, grants go through: they only append to the trail.
    await post('/api/admin/grants', 'global')
      .send({
        user: 'sara.steward',
        permission: 'protected',
        object_type: 'project',
        object: 'EPIC-DREM',
      })
      .expect(201);
    expect(hung.every((res) => !res.writableEnded)).toBe(true);
    receiver.answerWith(() => false);
    for (const res of hung) res.destroy();
  });

  it('the CLI creates, lists and ends subscriptions, through the same checks', async () => {
    const cli = async (...argv: string[]) => {
      let out = '';
      let err = '';
      const code = await runCli(
        argv,
        { DATABASE_URL: c.databaseUrl, WEBHOOK_ALLOW_HTTP: 'true', CATALOG_CLI_USER: 'ops' },
        { out: (t) => (out += t), err: (t) => (err += t), cwd: __dirname },
      );
      return { code, json: code === 0 ? (JSON.parse(out) as Record<string, unknown>) : {}, err };
    };
    const made = await cli(
      'subscriptions',
      'create',
      '--url',
      `${receiver.base}/cli`,
      '--events',
      'visa.issue',
    );
    expect(made).toMatchObject({
      code: 0,
      json: { events: ['visa.issue'], secret: expect.stringMatching(/^whsec_/) },
    });
    const listed = await cli('subscriptions', 'list');
    expect(JSON.stringify(listed.json)).not.toContain('whsec_');
    expect((await cli('subscriptions', 'create', '--url', 'ftp://nowhere')).code).toBe(1);
    expect(await cli('subscriptions', 'delete', String(made.json.id))).toMatchObject({
      code: 0,
      json: { status: 'Success' },
    });
    expect((await cli('subscriptions', 'delete', String(made.json.id))).code).toBe(1);
  });
});

/**
 * The sender polled its fan-out every WEBHOOK_POLL_MS whether or not anyone subscribed (issue
 * 59): with no subscription it now runs no query, and a subscription made or ended by another
 * writer (the CLI here, as another replica would) is heard at once.
 */
describe('the webhook sender without subscriptions', () => {
  let c: CatalogTestApp;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const secrets: Record<string, string> = {};

  beforeAll(async () => {
    receiver = await startReceiver(secrets);
    c = await startCatalogApp({
      WEBHOOK_DELIVERY: 'true',
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_POLL_MS: '20',
      WEBHOOK_TIMEOUT_MS: '500',
    });
  });
  afterAll(async () => {
    await c?.close();
    await receiver?.close();
  });

  const cli = async (...argv: string[]) => {
    let out = '';
    const code = await runCli(
      argv,
      { DATABASE_URL: c.databaseUrl, WEBHOOK_ALLOW_HTTP: 'true', CATALOG_CLI_USER: 'ops' },
      { out: (t) => (out += t), err: () => undefined, cwd: __dirname },
    );
    expect(code).toBe(0);
    return JSON.parse(out) as { id: number; secret?: string };
  };

  it('runs no query while there is none; one made elsewhere starts delivery; its end stops it', async () => {
    const dispatcher = c.app.get(WebhookDispatcher);
    const outbox = c.app.get(WebhooksRepository);
    const rounds = jest.spyOn(dispatcher, 'runRound');
    const asked = jest.spyOn(outbox, 'anySubscription');
    const fanOut = jest.spyOn(outbox, 'fanOut');
    const take = jest.spyOn(outbox, 'take');
    /** `n` more rounds of the sender, from now. */
    const roundsPass = async (n: number) => {
      const from = rounds.mock.calls.length;
      await until(() => rounds.mock.calls.length >= from + n, `${n} rounds of the sender`);
    };
    try {
      await until(() => c.app.get(CatalogVersionTracker).listening(), 'the listener to be up');
      await roundsPass(2);
      for (const spy of [asked, fanOut, take]) spy.mockClear();
      await roundsPass(10);
      expect([asked, fanOut, take].map((spy) => spy.mock.calls.length)).toEqual([0, 0, 0]);

      const made = await cli('subscriptions', 'create', '--url', `${receiver.base}/elsewhere`);
      secrets['/elsewhere'] = made.secret!;
      await c.dataSource.query(
        `INSERT INTO audit_log (actor_kind, action, object_type, object_id) VALUES ('system', 'update', 'dataset', 'heard')`,
      );
      await until(
        () => receiver.received.some((r) => r.body.data.object.id === 'heard'),
        'the entry delivered to the subscription the CLI made',
      );

      await cli('subscriptions', 'delete', String(made.id));
      // The end is heard: the sender asks once more, then stops querying again.
      await until(() => asked.mock.calls.length > 0, 'the sender to ask again');
      await roundsPass(2);
      for (const spy of [asked, fanOut, take]) spy.mockClear();
      await roundsPass(10);
      expect([asked, fanOut, take].map((spy) => spy.mock.calls.length)).toEqual([0, 0, 0]);
    } finally {
      for (const spy of [rounds, asked, fanOut, take]) spy.mockRestore();
    }
  });
});
