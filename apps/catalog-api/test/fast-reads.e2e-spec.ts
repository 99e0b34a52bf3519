import request from 'supertest';
import { CatalogVersionTracker } from '../src/catalog-version/catalog-version-tracker';
import { CatalogVersionRepository } from '../src/catalog-version/catalog-version.repository';
import { FastReads } from '../src/read-cache/fast-reads';
import { startCatalogApp, CatalogTestApp } from '../../../test/support/catalog-app';
import { freePort, startAppProcess, AppProcess } from '../../../test/support/app-process';
import { metricSample } from '../../../test/support/prometheus-text';
import { databaseEnv } from '../../../test/support/test-services';
import { APP_START_MS, PROCESS_START_MS } from '../../../test/support/timeouts';
import { until } from '../../../test/support/wait';
import { withClient } from '../../../scripts/lib/pg-client';
import { DemoCatalog, KEYS, startDemoCatalog } from './demo-catalog.fixture';
import { queriesDuring } from './support/queries-during';

interface LogLine {
  msg: string;
  req: { id: string; method: string; url: string; headers: Record<string, string> };
  res: { statusCode: number };
  responseTime: unknown;
}

/** How many requests the fast path answered during `work`. */
async function fastAnswersDuring(work: () => Promise<unknown>): Promise<number> {
  const spy = jest.spyOn(FastReads.prototype as unknown as { answer: () => void }, 'answer');
  try {
    await work();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

/** A write made behind the app's back, as the CLI or another replica would. */
async function externalSql(
  databaseUrl: string,
  sql: string,
  params: unknown[] = [],
): Promise<void> {
  await withClient(databaseUrl, (client) => client.query(sql, params));
}

/** Ends the version tracker's listening connection from the server's side. */
const TERMINATE_LISTENER = `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
  WHERE application_name = 'catalog-api version listener' AND datname = current_database()`;

async function projectTitles(c: DemoCatalog, key: keyof typeof KEYS = 'global'): Promise<string[]> {
  const res = await c.get('/api/projects', key).expect(200);
  return (res.body.items as { name: string }[]).map((p) => p.name).sort();
}

describe('fast reads: repeated reads answered before the framework', () => {
  let c: DemoCatalog;
  beforeAll(async () => {
    c = await startDemoCatalog();
  });
  afterAll(() => c.close());

  it('a repeat of a GET is answered by the fast path with the same bytes and headers, no query', async () => {
    const first = await c.get('/api/projects?fields=name', 'custodian').expect(200);
    let again!: request.Response;
    const answered = await fastAnswersDuring(async () => {
      const queries = await queriesDuring(async () => {
        again = await c.get('/api/projects?fields=name', 'custodian').expect(200);
      });
      expect(queries).toBe(0);
    });
    expect(answered).toBe(1);
    expect(again.text).toBe(first.text);
    for (const name of ['content-type', 'etag', 'cache-control', 'vary', 'content-length'])
      expect(again.headers[name]).toBe(first.headers[name]);
    expect(again.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    const echoed = await c
      .get('/api/projects?fields=name', 'custodian')
      .set('X-Request-Id', 'trace-7');
    expect(echoed.headers['x-request-id']).toBe('trace-7');
  });

  it('answers 304 to a matching If-None-Match, 200 to another tag', async () => {
    const first = await c.get('/api/datasets', 'catalogEndpoint').expect(200);
    const etag = first.headers.etag as string;
    const answered = await fastAnswersDuring(async () => {
      const notModified = await c
        .get('/api/datasets', 'catalogEndpoint')
        .set('If-None-Match', `W/${etag}`);
      expect(notModified.status).toBe(304);
      expect(notModified.text).toBe('');
      expect(notModified.headers.etag).toBe(etag);
      await c.get('/api/datasets', 'catalogEndpoint').set('If-None-Match', '"other"').expect(200);
    });
    expect(answered).toBe(2);
  });

  it('one key never gets what was remembered for another key, even of the same URL', async () => {
    const custodian = await projectTitles(c, 'custodian');
    const unprotected = await projectTitles(c, 'unprotected');
    expect(custodian).not.toEqual(unprotected);
    const answered = await fastAnswersDuring(async () => {
      expect(await projectTitles(c, 'custodian')).toEqual(custodian);
      expect(await projectTitles(c, 'unprotected')).toEqual(unprotected);
    });
    expect(answered).toBe(2);
    // An unknown key, on a URL others have read, goes to the guard.
    const res = await request(c.server).get('/api/projects').set('X-API-Key', 'x'.repeat(48));
    expect(res.status).toBe(401);
  });

  it('is never used for other methods, keys in the query string, HEAD, or a body', async () => {
    const url = `/api/projects?API_KEY=${KEYS.global}`;
    // The same key with its parameter name percent-encoded: Express decodes it to API_KEY.
    const encoded = `/api/projects?API%5FKEY=${KEYS.global}`;
    await request(c.server).get(url).expect(200);
    await request(c.server).get(encoded).expect(200);
    await c.get('/api/projects', 'global').expect(200);
    const answered = await fastAnswersDuring(async () => {
      await request(c.server).get(url).expect(200);
      await request(c.server).get(encoded).expect(200);
      await request(c.server).head('/api/projects').set('X-API-Key', KEYS.global).expect(200);
      await request(c.server)
        .get('/api/projects')
        .set('X-API-Key', KEYS.global)
        .set('Content-Type', 'application/json')
        .send('{}')
        .expect(200);
      const put = await request(c.server)
        .put('/api/projects')
        .set('X-API-Key', KEYS.global)
        .send({});
      expect(put.status).toBe(405);
    });
    expect(answered).toBe(0);
  });

  it('a write answered by this replica is seen by the very next read, every time', async () => {
    const id = (
      await c.dataSource.query<{ id: number }[]>(
        `SELECT id FROM users WHERE username = 'alice.white'`,
      )
    )[0].id;
    const setActive = (active: boolean) =>
      request(c.server)
        .patch(`/api/admin/users/${id}`)
        .set('X-API-Key', KEYS.global)
        .send({ is_active: active })
        .expect(200);
    for (let round = 0; round < 10; round++) {
      await c.get('/api/projects', 'custodian').expect(200);
      await c.get('/api/projects', 'custodian').expect(200);
      await setActive(false);
      await c.get('/api/projects', 'custodian').expect(401);
      await setActive(true);
      await c.get('/api/projects', 'custodian').expect(200);
    }
  });

  it('a write behind its back (CLI, another replica) is seen once its notification arrives', async () => {
    const before = await projectTitles(c);
    await projectTitles(c);
    await externalSql(
      c.databaseUrl,
      `UPDATE projects SET title = title || ' (renamed)' WHERE id = (SELECT min(id) FROM projects)`,
    );
    await until(
      async () => (await projectTitles(c)).some((t) => t.endsWith(' (renamed)')),
      'the rename',
    );
    await c.versionSettled();
    const after = await projectTitles(c);
    expect(after.filter((t) => t.endsWith(' (renamed)'))).toHaveLength(1);
    expect(after).toHaveLength(before.length);
  });

  it('while the listening connection is down every read asks the database; it reconnects by itself', async () => {
    const tracker = c.app.get(CatalogVersionTracker);
    await projectTitles(c);
    await projectTitles(c);
    await externalSql(c.databaseUrl, TERMINATE_LISTENER);
    await until(() => tracker.known() === null, 'the tracker to notice');
    await externalSql(
      c.databaseUrl,
      `UPDATE projects SET title = 'Offline rename' WHERE id = (SELECT max(id) FROM projects)`,
    );
    // No notification can arrive now: the read must not come from the fast index.
    expect(await projectTitles(c)).toContain('Offline rename');
    // The first try comes 250 ms after the loss; on a loaded machine a try can time out (2 s)
    // and the next waits twice as long.
    await until(() => tracker.known() !== null, 'the listener to reconnect', 20_000);
    expect(await projectTitles(c)).toContain('Offline rename');
    const answered = await fastAnswersDuring(() => projectTitles(c));
    expect(answered).toBe(1);
  });

  it('reconnects when the connection ends just after a heartbeat read succeeded', async () => {
    const tracker = c.app.get(CatalogVersionTracker);
    const versions = c.app.get(CatalogVersionRepository);
    await until(() => tracker.known() !== null, 'the listener');
    const read = versions.currentOn.bind(versions);
    // The heartbeat's read comes back, then the connection ends before the heartbeat goes on:
    // its next heartbeat must not take the place of the reconnection.
    const heartbeat = jest.spyOn(versions, 'currentOn').mockImplementationOnce(async (client) => {
      const version = await read(client);
      const ended = new Promise((resolve) => client.once('end', resolve));
      await externalSql(c.databaseUrl, TERMINATE_LISTENER);
      await ended;
      return version;
    });
    try {
      // Heartbeats come every 5 s.
      await until(() => heartbeat.mock.calls.length > 0, 'a heartbeat', 20_000);
      await until(() => tracker.known() === null, 'the tracker to notice');
      await until(() => tracker.known() !== null, 'the listener to reconnect', 20_000);
    } finally {
      heartbeat.mockRestore();
    }
    await projectTitles(c);
    expect(await fastAnswersDuring(() => projectTitles(c))).toBe(1);
  });

  it('answers a repeated public term search without a credential, fresh after a vocabulary load', async () => {
    const url = '/api/termsearch/gene?search=zzfastgene&page=1';
    const search = () => request(c.server).get(url).expect(200);
    expect((await search()).body.results).toEqual([]);
    expect(await fastAnswersDuring(search)).toBe(1);
    await request(c.server)
      .post('/api/admin/terms/gene')
      .set('X-API-Key', KEYS.global)
      .set('Content-Type', 'text/plain')
      .send('HGNC:99981\tZZFASTGENE1\n')
      .expect(200);
    expect((await search()).body.results).toEqual([
      expect.objectContaining({ text: 'ZZFASTGENE1', term_id: 'HGNC:99981' }),
    ]);
    // A Bearer token may change what a route answers: never replayed for it.
    const withToken = () => request(c.server).get(url).set('Authorization', 'Bearer x').expect(200);
    await withToken();
    expect(await fastAnswersDuring(withToken)).toBe(0);
  });

  it('stops replaying permissions at the end of the UTC day they were computed for', async () => {
    const url = '/api/permissions/demo-oidc-victor-viewer';
    await c.get(url, 'global').expect(200);
    expect(await fastAnswersDuring(() => c.get(url, 'global').expect(200))).toBe(1);
    const realNow = Date.now.bind(Date);
    const tomorrow = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 86_400_000);
    try {
      expect(await fastAnswersDuring(() => c.get(url, 'global').expect(200))).toBe(0);
    } finally {
      tomorrow.mockRestore();
    }
  });

  it('counts fast answers in the request metrics under their route', async () => {
    const sample = async () =>
      metricSample(
        (await request(c.server).get('/metrics').expect(200)).text,
        'http_requests_total',
        {
          method: 'GET',
          route: '/api/cohorts',
          status: '200',
        },
      ) ?? 0;
    const before = await sample();
    await c.get('/api/cohorts', 'global').expect(200);
    const answered = await fastAnswersDuring(() => c.get('/api/cohorts', 'global').expect(200));
    expect(answered).toBe(1);
    expect(await sample()).toBe(before + 2);
  });
});

describe('fast reads: CATALOG_VERSION_LISTEN=false', () => {
  let t: CatalogTestApp;
  beforeAll(async () => {
    t = await startCatalogApp({ CATALOG_VERSION_LISTEN: 'false' });
  });
  afterAll(() => t.close());

  it('asks the database for the version on every read and never answers early', async () => {
    const get = () =>
      request(t.server).get('/api/projects').set('X-API-Key', KEYS.global).expect(200);
    await get();
    const answered = await fastAnswersDuring(async () => {
      expect(await queriesDuring(get)).toBe(1);
    });
    expect(answered).toBe(0);
    expect(t.app.get(CatalogVersionTracker).known()).toBeNull();
  });
});

describe('fast reads: the access log of the running service', () => {
  let proc: AppProcess;
  let t: CatalogTestApp;
  let url: string;
  beforeAll(async () => {
    t = await startCatalogApp();
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    proc = startAppProcess('catalog-api', 'src/main', {
      // Behind the run's PgBouncer too when it has one, like the app in this process.
      ...databaseEnv(t.databaseUrl),
      PORT: String(port),
      HOST: '127.0.0.1',
      MIGRATIONS_RUN: 'false',
      GLOBAL_API_KEY: KEYS.global,
      LOG_LEVEL: 'info',
    });
    await proc.waitFor(/Nest application successfully started/);
    // An app in this process, then one booted through ts-node: 60 s was too short at load 20.
  }, APP_START_MS + PROCESS_START_MS);
  afterAll(async () => {
    proc.child.kill('SIGTERM');
    await proc.exited;
    await t.close();
  });

  /** The service's log lines of these requests, once all of them are written. */
  async function logLinesOf(ids: string[]): Promise<LogLine[]> {
    await until(() => ids.every((id) => proc.output().includes(id)), 'the log lines');
    return proc
      .output()
      .split('\n')
      .filter((line) => ids.some((id) => line.includes(id)))
      .map((line) => JSON.parse(line) as LogLine);
  }

  it('writes one JSON line per request with its id, whichever path answered, and no key', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${url}/api/partners`, { headers: { 'X-API-Key': KEYS.global } });
      expect(res.status).toBe(200);
      ids.push(res.headers.get('x-request-id')!);
    }
    const lines = await logLinesOf(ids);
    expect(lines).toHaveLength(3);
    for (const [i, line] of lines.entries()) {
      expect(line.msg).toBe('request completed');
      expect(line.req).toMatchObject({ id: ids[i], method: 'GET', url: '/api/partners' });
      expect(line.req.headers['x-api-key']).toBe('[REDACTED]');
      expect(line.res.statusCode).toBe(200);
      expect(typeof line.responseTime).toBe('number');
    }
    expect(proc.output()).not.toContain(KEYS.global);
  });

  it('never logs a key sent in the query, whatever the encoding of its name, the route or the answer', async () => {
    const names = ['API_KEY', 'API%5FKEY', '%41PI_KEY', 'api_key', 'API_KEY%00'];
    const paths = ['/api/partners', '/api/datasets', '/api/no-such-route', '/api/projects?page=x'];
    const ids: string[] = [];
    for (const name of names) {
      for (const path of paths) {
        const separator = path.includes('?') ? '&' : '?';
        const res = await fetch(`${url}${path}${separator}${name}=${KEYS.global}`, {
          // A page opened with the key in its URL sends that URL on as the Referer.
          headers: { Referer: `${url}/admin/queues?${name}=${KEYS.global}` },
        });
        await res.arrayBuffer();
        ids.push(res.headers.get('x-request-id')!);
      }
    }
    const lines = await logLinesOf(ids);
    expect(lines.some((line) => line.req.url.includes('API%5FKEY=[REDACTED]'))).toBe(true);
    expect(lines.every((line) => line.req.headers.referer.endsWith('=[REDACTED]'))).toBe(true);
    expect(proc.output()).not.toContain(KEYS.global);
  });
});
