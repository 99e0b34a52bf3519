import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { CatalogTestApp, startCatalogApp } from '../../../test/support/catalog-app';
import { metricSample } from '../../../test/support/prometheus-text';
import { until } from '../../../test/support/wait';
import { DatasetExportsRefresher } from '../src/datasets/dataset-exports-refresher';
import { DemoCatalog, KEYS, startDemoCatalog } from './demo-catalog.fixture';

/**
 * Slow readers: clients that ask for large answers and then read slowly or not at all, on real
 * sockets that stop reading (the kernel's buffers fill, then the server's writes wait). The
 * answers here are 7-8 MB, about twice what a stopped loopback socket absorbs, so each one
 * really stalls: `http_responses_sending` counts it only while it is unfinished.
 */
const ENV = {
  DCAT_PUBLISHER_NAME: 'Luxembourg Centre for Systems Biomedicine',
  // The stalled sockets below speak for many clients through this (trusted) proxy address.
  TRUSTED_PROXIES: '127.0.0.1',
  SLOW_READERS_PER_CLIENT: '3',
  SLOW_READERS_MAX: '20',
};
/** Pool of the test app (test/support/catalog-app.ts): every stall test holds far more answers. */
const POOL = 4;
const BIG = 120;

/** Streamed answers of every kind: the DCAT page in its three formats, the JSON list. */
const STREAMED = ['/api/dcat', '/api/dcat?format=jsonld', '/api/dcat?format=rdf', '/api/datasets'];

/** Datasets with 64,000-character descriptions: every answer listing them is about 8 MB. */
async function addBigDatasets(c: DemoCatalog): Promise<void> {
  await c.dataSource.query(
    `INSERT INTO datasets (title, description)
     SELECT 'Big dataset ' || g, repeat(md5(g::text), 2000) FROM generate_series(1, $1) g`,
    [BIG],
  );
  await c.versionSettled();
  // Their exports rendered and stored now, so no read below schedules a background refresh.
  await c.get('/api/datasets', 'global').expect(200);
  await c.app.get(DatasetExportsRefresher).settled();
}

async function metric(server: CatalogTestApp['server'], name: string): Promise<number> {
  const res = await request(server).get('/metrics').expect(200);
  return metricSample(res.text, name) ?? 0;
}

describe('slow readers (clients that stop reading large answers)', () => {
  let c: DemoCatalog;
  let port: number;
  const sockets: Socket[] = [];

  /**
   * A request from `client` (through the trusted proxy) on a socket that stops reading after the
   * first bytes of the answer: resolves with its status once they arrived.
   */
  function stall(path: string, client: string, at = port): Promise<number> {
    const socket = connect(at, '127.0.0.1');
    socket.on('error', () => undefined);
    sockets.push(socket);
    const status = new Promise<number>((resolve) => {
      socket.once('data', (chunk: Buffer) => {
        socket.pause();
        resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 0));
      });
      socket.once('close', () => resolve(0));
    });
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: catalog.test\r\nX-API-Key: ${KEYS.global}\r\n` +
        `X-Forwarded-For: ${client}\r\n\r\n`,
    );
    return status;
  }
  /** `n` stalled answers, their heads sent (a DCAT page's once its ids are read). */
  const stallAll = async (n: number, client: (i: number) => string) => {
    const statuses = await Promise.all(
      Array.from({ length: n }, (_, i) => stall(STREAMED[i % STREAMED.length], client(i))),
    );
    expect(statuses).toEqual(Array.from({ length: n }, () => 200));
    await waitForSending(n);
  };

  const sending = () => metric(c.server, 'http_responses_sending');
  const waitForSending = (n: number) =>
    until(async () => (await sending()) === n, `${n} answers being sent`, 20_000, 50);
  const release = async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await waitForSending(0);
  };
  const as = (client: string, path: string) =>
    request(c.server).get(path).set('X-API-Key', KEYS.global).set('X-Forwarded-For', client);

  beforeAll(async () => {
    c = await startDemoCatalog(ENV);
    await addBigDatasets(c);
    await new Promise<void>((resolve) => c.server.listen(0, '127.0.0.1', resolve));
    port = (c.server.address() as AddressInfo).port;
  });
  afterEach(release);
  afterAll(() => c.close());

  it(`holds no database connection: with ${4 * POOL} stalled answers health, reads, writes and a full page answer`, async () => {
    await stallAll(4 * POOL, (i) => `10.0.0.${i + 1}`);
    // Nothing else runs now. A DCAT page is sent while it is read, so the last pages begun may
    // still be read: their transactions end at the database's pace, not their clients'. One kept
    // open for a stalled answer would never end.
    const open = async () => {
      const [{ n }] = await c.dataSource.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND xact_start IS NOT NULL AND pid <> pg_backend_pid()`,
      );
      return n;
    };
    await until(async () => (await open()) === 0, 'no transaction open', 20_000, 50);
    await request(c.server).get('/health/ready').expect(200);
    await as('10.9.0.1', '/api/projects').expect(200);
    await request(c.server)
      .post('/api/partners')
      .set('X-API-Key', KEYS.global)
      .send({ items: [{ name: 'Written while readers stall' }] })
      .expect(200);
    const page = await as('10.9.0.2', '/api/dcat').expect(200);
    expect(page.text.length).toBeGreaterThan(BIG * 64_000);
    expect(page.text).toContain(`Big dataset ${BIG}`);
    expect(await sending()).toBe(4 * POOL);
  });

  it('refuses a client more answers while it leaves SLOW_READERS_PER_CLIENT unread (429), not others', async () => {
    await stallAll(3, () => '10.1.0.1');
    const refused = await as('10.1.0.1', '/api/projects').expect(429);
    expect(refused.headers['retry-after']).toBe('30');
    expect(refused.body).toEqual({
      status: 'Error',
      description: '3 answers to this client are still being sent; read them first',
      more: {},
    });
    await as('10.1.0.1', '/health/ready').expect(200);
    await as('10.1.0.2', '/api/projects').expect(200);
    // Its answers done (here: hung up), the client is served again.
    sockets.shift()!.destroy();
    await waitForSending(2);
    await as('10.1.0.1', '/api/projects').expect(200);
  });

  it('refuses everyone but the health probes while SLOW_READERS_MAX answers are unread (503)', async () => {
    await stallAll(20, (i) => `10.2.0.${i + 1}`);
    const refused = await as('10.2.1.1', '/api/projects').expect(503);
    expect(refused.headers['retry-after']).toBe('30');
    expect(refused.body.description).toBe(
      'Too many answers are still being sent to slow clients; retry later',
    );
    await request(c.server).get('/health/ready').expect(200);
    await request(c.server).get('/health/live').expect(200);
    await request(c.server).get('/metrics').expect(200);
  });

  describe('with DCAT_HELD_DATASETS_MAX', () => {
    let bounded: CatalogTestApp;
    let boundedPort: number;
    const held = () => metric(bounded.server, 'http_responses_held_weight');

    beforeAll(async () => {
      bounded = await startCatalogApp(
        {
          ...ENV,
          SLOW_READERS_PER_CLIENT: '100',
          // A first page of 100 big datasets (about 6.5 MB, enough to stall), and room for one.
          DCAT_PAGE_SIZE: '100',
          DCAT_HELD_DATASETS_MAX: '150',
        },
        c.databaseUrl,
      );
      await new Promise<void>((resolve) => bounded.server.listen(0, '127.0.0.1', resolve));
      boundedPort = (bounded.server.address() as AddressInfo).port;
    });
    afterAll(() => bounded.close());

    it('refuses a DCAT answer whose facts would pass what stalled answers may hold (503), not a smaller one, and serves it again once they are read', async () => {
      expect(await stall('/api/dcat', '10.3.0.1', boundedPort)).toBe(200);
      await until(async () => (await held()) === 100, 'the first page to be held');
      const refused = await request(bounded.server)
        .get('/api/dcat?format=jsonld')
        .set('X-API-Key', KEYS.global)
        .set('X-Forwarded-For', '10.3.0.2')
        .expect(503);
      expect(refused.headers['retry-after']).toBe('30');
      expect(refused.body.description).toBe(
        'Answers still being sent to slow clients hold too much; retry later',
      );
      // One dataset fits beside the held page; health never waits.
      const accession = await c.accession('Big dataset 1');
      await request(bounded.server)
        .get(`/api/dcat/datasets/${accession}`)
        .set('X-API-Key', KEYS.global)
        .expect(200);
      await request(bounded.server).get('/health/live').expect(200);
      expect(await held()).toBe(100);
      // The held page read (here: hung up), the next one is served.
      for (const socket of sockets.splice(0)) socket.destroy();
      await until(async () => (await held()) === 0, 'the held page to be let go');
      const page = await request(bounded.server)
        .get('/api/dcat?format=jsonld')
        .set('X-API-Key', KEYS.global)
        .expect(200);
      // The first page: the demo catalog's datasets, then the big ones.
      expect(page.text.length).toBeGreaterThan(80 * 64_000);
      expect(page.text).toContain('Big dataset 1');
    });
  });

  describe(`with SLOW_READER_TIMEOUT_MS`, () => {
    let cutting: CatalogTestApp;
    let cuttingPort: number;

    beforeAll(async () => {
      cutting = await startCatalogApp(
        {
          ...ENV,
          SLOW_READER_TIMEOUT_MS: '2000',
          SLOW_READERS_PER_CLIENT: '100',
          // The 8 MB list is too large for the cache here: it is built for each read.
          RESPONSE_CACHE_MAX_BYTES: String(1024 * 1024),
        },
        c.databaseUrl,
      );
      await new Promise<void>((resolve) => cutting.server.listen(0, '127.0.0.1', resolve));
      cuttingPort = (cutting.server.address() as AddressInfo).port;
    });
    afterAll(() => cutting.close());

    /** A request read at `pace`, or not at all until `resume`; `done`: the bytes it got in all. */
    function read(path: string, pace?: { burst: number; gapMs: number }) {
      const socket = connect(cuttingPort, '127.0.0.1');
      let bytes = 0;
      let burst = 0;
      socket.on('error', () => undefined);
      if (pace === undefined) socket.pause();
      socket.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        burst += chunk.length;
        if (pace !== undefined && burst >= pace.burst) {
          burst = 0;
          socket.pause();
          setTimeout(() => socket.resume(), pace.gapMs);
        }
      });
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: catalog.test\r\nX-API-Key: ${KEYS.global}\r\n` +
          'Connection: close\r\n\r\n',
      );
      const done = new Promise<number>((resolve) => socket.on('close', () => resolve(bytes)));
      return { done, resume: () => socket.resume() };
    }
    const stalledTotal = () => metric(cutting.server, 'http_responses_stalled_total');

    it('shares a list too large for the cache with the readers that come while one holds it', async () => {
      const builds = async () =>
        metricSample(
          (await request(cutting.server).get('/metrics').expect(200)).text,
          'catalog_read_cache_builds_total',
          { route: '/api/datasets' },
        ) ?? 0;
      const before = await builds();
      const held = read('/api/datasets');
      await until(
        async () => (await metric(cutting.server, 'http_responses_sending')) === 1,
        'the first answer to be held',
      );
      const again = await request(cutting.server)
        .get('/api/datasets')
        .set('X-API-Key', KEYS.global)
        .expect(200);
      expect(again.text.length).toBeGreaterThan(BIG * 64_000);
      // One build for both: the second read got the bytes the first one still holds.
      expect(await builds()).toBe(before + 1);
      held.resume();
      await held.done;
    });

    it('cuts answers their clients stopped reading, and keeps one read slowly but steadily', async () => {
      const stalled = STREAMED.map((path) => read(path));
      // 512 KB every 400 ms: 8 MB takes about 6 s, three times the time-out, with no gap near it.
      const steady = read('/api/dcat', { burst: 512 * 1024, gapMs: 400 });
      await until(
        async () => (await stalledTotal()) === STREAMED.length,
        'the stalled answers to be cut',
        30_000,
        100,
      );
      // The server has let go: what the kernel held is all a stalled client gets, then the end.
      for (const { done, resume } of stalled) {
        resume();
        expect(await done).toBeLessThan(BIG * 64_000);
      }
      expect(await steady.done).toBeGreaterThan(BIG * 64_000);
      expect(await stalledTotal()).toBe(STREAMED.length);
      expect(await metric(cutting.server, 'http_responses_sending')).toBe(0);
    }, 60_000);
  });
});
