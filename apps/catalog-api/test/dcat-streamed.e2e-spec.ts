import { get as httpGet } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { metricSample } from '../../../test/support/prometheus-text';
import { until } from '../../../test/support/wait';
import { DcatRepository } from '../src/dcat/dcat.repository';
import { FIRST_BATCH } from '../src/dcat/facts-batches';
import { DemoCatalog, KEYS, startDemoCatalog } from './demo-catalog.fixture';
import { DCAT_TEST_ENV } from './support/dcat-test-env';

/**
 * A DCAT page is sent while it is read (decisions/dcat-sent-while-read.md): its first batch leaves
 * before the later ones are read, it is weighed against DCAT_HELD_DATASETS_MAX from before its
 * first byte, and a read that fails once the page has begun aborts the response. The later
 * batches' statements are held back here (a gate in front of the repository's facts read), so
 * what a client gets meanwhile is what was sent before them.
 */
const PAGE = 500;
const ENV = {
  ...DCAT_TEST_ENV,
  DCAT_PAGE_SIZE: String(PAGE),
  // One page held, and room for a single dataset beside it: not for a second page.
  DCAT_HELD_DATASETS_MAX: String(PAGE + 100),
};

/** A response as a client sees it: status, the bytes so far, whether it ended whole. */
interface Seen {
  status: number;
  text: () => string;
  /** Resolves once the connection is done: `complete` false when the answer was aborted. */
  done: Promise<{ complete: boolean }>;
}

describe('GET /api/dcat sent while it is read', () => {
  let c: DemoCatalog;
  let port: number;
  let repo: DcatRepository;
  /** The ids of the first page, in order. */
  let firstPage: number[];

  /** A GET of `path` with the global key, followed byte by byte. */
  function follow(path: string): Promise<Seen> {
    return new Promise((resolve, reject) => {
      const req = httpGet({ port, path, headers: { 'X-API-Key': KEYS.global } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        const done = new Promise<{ complete: boolean }>((ended) => {
          res.on('error', () => undefined);
          res.on('close', () => ended({ complete: res.complete }));
        });
        resolve({
          status: res.statusCode ?? 0,
          text: () => Buffer.concat(chunks).toString('utf8'),
          done,
        });
      });
      req.on('error', reject);
    });
  }

  /**
   * Holds back every facts statement after the first batch of the first page until `open`;
   * `fail` makes them reject instead.
   */
  function gateLaterBatches(fail?: Error) {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    const factsText = repo.factsText.bind(repo);
    const spy = jest.spyOn(repo, 'factsText').mockImplementation(async (m, viewer, ids) => {
      if (ids[0] !== firstPage[0]) {
        await opened;
        if (fail !== undefined) throw fail;
      }
      return factsText(m, viewer, ids);
    });
    return { spy, open };
  }

  const metric = async (name: string) =>
    metricSample((await request(c.server).get('/metrics').expect(200)).text, name) ?? 0;

  beforeAll(async () => {
    c = await startDemoCatalog(ENV);
    await c.dataSource.query(
      `INSERT INTO datasets (title) SELECT 'Streamed dataset ' || g FROM generate_series(1, $1) g`,
      [PAGE],
    );
    await c.versionSettled();
    const ids = await c.dataSource.query<{ id: number }[]>(
      'SELECT id FROM datasets ORDER BY id LIMIT $1',
      [PAGE],
    );
    firstPage = ids.map((row) => row.id);
    repo = c.app.get(DcatRepository);
    await new Promise<void>((resolve) => c.server.listen(0, '127.0.0.1', resolve));
    port = (c.server.address() as AddressInfo).port;
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(() => c.close());

  it('sends the head and the first batch before the later batches are read, then the whole page', async () => {
    const titles = await c.dataSource.query<{ id: number; title: string }[]>(
      'SELECT id, title FROM datasets WHERE id = ANY($1::int[]) ORDER BY id',
      [firstPage],
    );
    const { spy, open } = gateLaterBatches();
    const page = await follow('/api/dcat');
    expect(page.status).toBe(200);
    const inFirstBatch = `dct:title "${titles[FIRST_BATCH - 1].title}"`;
    await until(() => page.text().includes(inFirstBatch), 'the first batch to arrive');
    // The second batch is asked for (read ahead) and held back; the rest is not there yet.
    expect(spy).toHaveBeenCalledTimes(2);
    expect(page.text()).toContain('a dcat:Catalog');
    expect(page.text()).not.toContain(`dct:title "${titles[FIRST_BATCH].title}"`);
    open();
    expect(await page.done).toEqual({ complete: true });
    const datasets = page.text().match(/^<[^>]+> *\n +a dcat:Dataset/gm) ?? [];
    expect(datasets).toHaveLength(PAGE);
    expect(page.text()).toContain(`dct:title "${titles[PAGE - 1].title}"`);
  });

  it('weighs a page being streamed against DCAT_HELD_DATASETS_MAX: another page is refused (503) until it is sent', async () => {
    const { open } = gateLaterBatches();
    const page = await follow('/api/dcat');
    await until(async () => (await metric('http_responses_held_weight')) === PAGE, 'the page held');
    const refused = await c.get('/api/dcat?format=jsonld', 'global').expect(503);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(refused.body.description).toBe(
      'Answers still being sent to slow clients hold too much; retry later',
    );
    expect(await metric('http_responses_held_weight')).toBe(PAGE);
    open();
    expect(await page.done).toEqual({ complete: true });
    await until(async () => (await metric('http_responses_held_weight')) === 0, 'the page let go');
    await c.get('/api/dcat?format=jsonld', 'global').expect(200);
  });

  it('aborts a page whose read fails after its first byte (never a short page that looks whole)', async () => {
    const { open } = gateLaterBatches(new Error('the facts statement failed'));
    const page = await follow('/api/dcat');
    expect(page.status).toBe(200);
    await until(() => page.text().includes('a dcat:Dataset'), 'the first batch to arrive');
    open();
    expect(await page.done).toEqual({ complete: false });
    jest.restoreAllMocks();
    // Its transaction ended: the pool serves the next pages.
    for (let i = 0; i < 6; i++) await c.get('/api/dcat?page=2', 'global').expect(200);
  });

  it('answers a read that fails before the first byte in the error envelope', async () => {
    jest.spyOn(repo, 'pageMembers').mockRejectedValueOnce(new Error('the page statement failed'));
    const res = await c.get('/api/dcat', 'global').expect(500);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      status: 'Error',
      description: expect.any(String),
      more: { error_id: expect.any(String) },
    });
  });
});
