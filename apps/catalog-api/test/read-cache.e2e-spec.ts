import request from 'supertest';
import { DatasetsRepository } from '../src/datasets/datasets.repository';
import { ReadCacheService } from '../src/read-cache/read-cache.service';
import { metricSample } from '../../../test/support/prometheus-text';
import { until } from '../../../test/support/wait';
import { withClient } from '../../../scripts/lib/pg-client';
import { DemoCatalog, startDemoCatalog } from './demo-catalog.fixture';

const ROUTE = '/api/datasets';
const READERS = 8;

describe('read cache: concurrent cold readers of one answer', () => {
  let c: DemoCatalog;
  beforeAll(async () => {
    c = await startDemoCatalog();
  });
  afterAll(() => c.close());

  const counts = () => {
    const service = c.app.get(ReadCacheService);
    return {
      builds: service.counts.builds.get(ROUTE) ?? 0,
      joined: service.counts.joined.get(ROUTE) ?? 0,
    };
  };
  const buildsMetric = async () =>
    metricSample(
      (await request(c.server).get('/metrics').expect(200)).text,
      'catalog_read_cache_builds_total',
      { route: ROUTE },
    ) ?? 0;

  /** The datasets' pages are read once `gate` resolves (and not at all if it rejects). */
  function holdPages(gate: Promise<void>) {
    const pages = DatasetsRepository.prototype.findExportPages;
    return jest
      .spyOn(DatasetsRepository.prototype, 'findExportPages')
      .mockImplementation(async function* (this: DatasetsRepository, ...args) {
        await gate;
        yield* pages.apply(this, args);
      });
  }

  /** A write behind the app's back, then the version it makes: every answer is cold again. */
  async function newVersion(): Promise<void> {
    await withClient(c.databaseUrl, (client) =>
      client.query(`UPDATE datasets SET title = title WHERE id = (SELECT min(id) FROM datasets)`),
    );
    await c.versionSettled();
  }

  it('N concurrent cold requests run the route once and all get its answer', async () => {
    await newVersion();
    const before = counts();
    const metricBefore = await buildsMetric();
    // The first build waits until every other reader has joined it: without that, a build
    // faster than the requests' arrival would let the test pass with no coalescing at all.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const spy = holdPages(gate);
    try {
      const answers = Promise.all(
        Array.from({ length: READERS }, () => c.get(ROUTE, 'global').then((res) => res)),
      );
      await until(
        () => counts().joined - before.joined === READERS - 1,
        'every other reader to join the first build',
      );
      release();
      const responses = await answers;
      expect(responses.map((res) => res.status)).toEqual(Array(READERS).fill(200));
      expect(new Set(responses.map((res) => res.text)).size).toBe(1);
      expect(new Set(responses.map((res) => res.headers.etag as string)).size).toBe(1);
      expect(JSON.parse(responses[0].text).items.length).toBeGreaterThan(0);
      expect(spy).toHaveBeenCalledTimes(1);
      expect(counts().builds - before.builds).toBe(1);
      expect((await buildsMetric()) - metricBefore).toBe(1);
    } finally {
      spy.mockRestore();
    }
  });

  it('readers of different answers do not share a build', async () => {
    await newVersion();
    const before = counts();
    await Promise.all([
      c.get(ROUTE, 'global').expect(200),
      c.get(ROUTE, 'custodian').expect(200),
      c.get(`${ROUTE}?project_id=1`, 'global').expect(200),
    ]);
    expect(counts().builds - before.builds).toBe(3);
    expect(counts().joined - before.joined).toBe(0);
  });

  it('a parameter the route never reads is the same answer; one it reads is another', async () => {
    await newVersion();
    const builds = () => c.app.get(ReadCacheService).counts.builds.get('/api/cohorts') ?? 0;
    const before = builds();
    const all = await c.get('/api/cohorts?utm=1').expect(200);
    expect((await c.get('/api/cohorts?utm=2').expect(200)).text).toBe(all.text);
    expect(builds() - before).toBe(1);
    const name = (JSON.parse(all.text) as { results: { name: string }[] }).results[0].name;
    const one = await c.get(`/api/cohorts?utm=3&name=${encodeURIComponent(name)}`).expect(200);
    expect(one.text).not.toBe(all.text);
    expect(builds() - before).toBe(2);
  });

  it('a failed build fails its waiters once; the next reader builds again', async () => {
    await newVersion();
    const before = counts();
    let fail!: (error: Error) => void;
    const gate = new Promise<void>((_, reject) => (fail = reject));
    const spy = holdPages(gate);
    try {
      const answers = Promise.all(
        Array.from({ length: 3 }, () => c.get(ROUTE, 'global').then((res) => res)),
      );
      await until(() => counts().joined - before.joined === 2, 'the others to join the build');
      fail(new Error('the database went away'));
      expect((await answers).map((res) => res.status)).toEqual([500, 500, 500]);
      spy.mockRestore();
      await c.get(ROUTE, 'global').expect(200);
      expect(counts().builds - before.builds).toBe(2);
    } finally {
      spy.mockRestore();
    }
  });
});
