import request from 'supertest';
import {
  CatalogTestApp,
  startCatalogApp,
  TEST_GLOBAL_KEY,
} from '../../../test/support/catalog-app';
import { DatasetExportsRefresher } from '../src/datasets/dataset-exports-refresher';
import { loadDemoData } from '../src/demo/demo-data-loader';
import { FdpService } from '../src/fdp/fdp.service';
import { FastReads } from '../src/read-cache/fast-reads';
import { DEMO_KEYS, KEYS } from './demo-catalog.fixture';
import { DCAT_TEST_ENV } from './support/dcat-test-env';
import { queriesDuring } from './support/queries-during';

/**
 * Tags the entity-tag index holds in this test's app (ETAG_INDEX_MAX_ENTRIES): a dataset's read
 * keeps its own and its distributions' (built with it).
 */
const TAGS_KEPT = 6;

/**
 * Conditional GETs of FAIR Data Point records answered by the entity-tag index (issue 58, item
 * 5; docs/decisions/fdp-entity-tag-index.md): a record the fast-read index (one entry here) has
 * let go still gets its 304 before the framework, per caller and Accept, and never after a data
 * change. Conditional requests as RFC 9110 §13.1.2 (If-None-Match, weak comparison) and §15.4.5
 * (what a 304 carries) describe them.
 */
describe('FDP conditional GETs from the entity-tag index', () => {
  let t: CatalogTestApp;
  let fastReads: FastReads;
  let a: string;
  let b: string;

  beforeAll(async () => {
    t = await startCatalogApp({
      ...DCAT_TEST_ENV,
      RESPONSE_CACHE_MAX_ENTRIES: '1',
      ETAG_INDEX_MAX_ENTRIES: String(TAGS_KEPT),
    });
    await loadDemoData(t.app, DEMO_KEYS);
    const rows = await t.dataSource.query<{ elu_accession: string }[]>(
      `SELECT d.elu_accession FROM datasets d WHERE EXISTS (SELECT 1 FROM exposures e
         WHERE e.dataset_id = d.id AND e.deprecated_at IS NULL) ORDER BY d.id LIMIT 2`,
    );
    [a, b] = rows.map((r) => `/fdp/dataset/${r.elu_accession}`);
    fastReads = t.app.get(FastReads);
  });
  afterAll(() => t.close());
  // The demo data's exports are refreshed in the background (a write): each test starts once
  // that is done and the version tracker vouches for the version again.
  beforeEach(async () => {
    await t.app.get(DatasetExportsRefresher).settled();
    await t.versionSettled();
  });

  const get = (path: string, headers: Record<string, string | undefined>) => {
    let req = request(t.server).get(path);
    for (const [name, value] of Object.entries(headers))
      if (value !== undefined) req = req.set(name, value);
    return req;
  };
  const as = (key: string | undefined, extra: Record<string, string> = {}) => ({
    'X-API-Key': key,
    Accept: 'text/turtle',
    ...extra,
  });

  /** What the framework's FDP controller answered during `work` (the index answered the rest). */
  async function frameworkAnswersDuring(work: () => Promise<unknown>): Promise<number> {
    const spy = jest.spyOn(t.app.get(FdpService), 'answer');
    try {
      await work();
      return spy.mock.calls.length;
    } finally {
      spy.mockRestore();
    }
  }

  it('answers 304 for a record the fast-read index has let go, before the framework, with no query', async () => {
    const first = await get(a, as(TEST_GLOBAL_KEY)).expect(200);
    await get(b, as(TEST_GLOBAL_KEY)).expect(200);
    // The fast-read index keeps one answer: b's.
    expect(fastReads.usage().entries).toBe(1);
    let again!: request.Response;
    const framework = await frameworkAnswersDuring(async () => {
      const queries = await queriesDuring(async () => {
        again = await get(a, as(TEST_GLOBAL_KEY, { 'If-None-Match': first.headers.etag })).expect(
          304,
        );
      });
      expect(queries).toBe(0);
    });
    expect(framework).toBe(0);
    expect(again.headers.etag).toBe(first.headers.etag);
    expect(again.headers.vary).toBe(first.headers.vary);
    expect(again.headers['cache-control']).toBe('no-cache');
    expect(again.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    // What a 304 does not repeat (RFC 9110 §15.4.5): the body's own metadata.
    for (const name of ['content-type', 'link', 'last-modified'])
      expect(again.headers[name]).toBeUndefined();
    expect(again.text ?? '').toBe('');
    // Another tag, or a list naming it among others (§13.1.2), as the framework compares.
    await get(a, as(TEST_GLOBAL_KEY, { 'If-None-Match': '"other"' })).expect(200);
    const listed = await frameworkAnswersDuring(() =>
      get(a, as(TEST_GLOBAL_KEY, { 'If-None-Match': `"x", W/${first.headers.etag}` })).expect(304),
    );
    expect(listed).toBe(0);
  });

  it('answers 200 with a new tag after a data change, and 304 to the new tag', async () => {
    const first = await get(b, as(TEST_GLOBAL_KEY)).expect(200);
    // b's answer leaves the fast-read index.
    await get(a, as(TEST_GLOBAL_KEY)).expect(200);
    const cached = await frameworkAnswersDuring(() =>
      get(b, as(TEST_GLOBAL_KEY, { 'If-None-Match': first.headers.etag })).expect(304),
    );
    expect(cached).toBe(0);
    await t.dataSource.query(
      `UPDATE datasets SET title = title || ' (renamed)' WHERE elu_accession = $1`,
      [b.split('/').pop()],
    );
    await t.versionSettled();
    const changed = await get(
      b,
      as(TEST_GLOBAL_KEY, { 'If-None-Match': first.headers.etag }),
    ).expect(200);
    expect(changed.headers.etag).not.toBe(first.headers.etag);
    expect(changed.text).toContain('(renamed)');
    const framework = await frameworkAnswersDuring(() =>
      get(b, as(TEST_GLOBAL_KEY, { 'If-None-Match': changed.headers.etag })).expect(304),
    );
    expect(framework).toBe(0);
  });

  it('never answers one caller 304 to the tag of another caller or of another type', async () => {
    const callers = { global: TEST_GLOBAL_KEY, custodian: KEYS.custodian, anonymous: undefined };
    const tags = new Map<string, string>();
    for (const [name, key] of Object.entries(callers)) {
      const res = await get(a, as(key)).expect(200);
      tags.set(name, res.headers.etag);
      // Held by the index for this caller now.
      const framework = await frameworkAnswersDuring(() =>
        get(a, as(key, { 'If-None-Match': res.headers.etag })).expect(304),
      );
      expect(framework).toBe(0);
    }
    expect(new Set(tags.values()).size).toBe(3);
    for (const [name, key] of Object.entries(callers))
      for (const [other, tag] of tags) {
        if (other === name) continue;
        const res = await get(a, as(key, { 'If-None-Match': tag })).expect(200);
        expect(res.headers.etag).toBe(tags.get(name));
      }
    // A Bearer token is never answered by the index: the framework decides who it is.
    const bearer = await frameworkAnswersDuring(() =>
      get(a, { Authorization: 'Bearer not-a-token', 'If-None-Match': tags.get('anonymous') }),
    );
    expect(bearer).toBe(1);
    // Another type is another answer.
    const json = await get(
      a,
      as(TEST_GLOBAL_KEY, { Accept: 'application/ld+json', 'If-None-Match': tags.get('global')! }),
    ).expect(200);
    expect(json.headers.etag).not.toBe(tags.get('global'));
  });

  it(`holds at most ETAG_INDEX_MAX_ENTRIES tags (${TAGS_KEPT} here): the oldest go to the framework, still 304`, async () => {
    // Each Accept is another key (ten here; each read keeps the dataset's and its distributions').
    const accepts = Array.from({ length: 10 }, (_, i) => `text/turtle;q=0.${i + 1}`);
    const tags: string[] = [];
    for (const accept of accepts) {
      const res = await get(a, as(TEST_GLOBAL_KEY, { Accept: accept })).expect(200);
      tags.push(res.headers.etag);
      expect(fastReads.tagUsage().entries).toBeLessThanOrEqual(TAGS_KEPT);
    }
    expect(fastReads.tagUsage().entries).toBe(TAGS_KEPT);
    const kept = await frameworkAnswersDuring(() =>
      get(a, as(TEST_GLOBAL_KEY, { Accept: accepts[9], 'If-None-Match': tags[9] })).expect(304),
    );
    expect(kept).toBe(0);
    const evicted = await frameworkAnswersDuring(() =>
      get(a, as(TEST_GLOBAL_KEY, { Accept: accepts[0], 'If-None-Match': tags[0] })).expect(304),
    );
    expect(evicted).toBe(1);
    expect(fastReads.tagUsage().entries).toBe(TAGS_KEPT);
  });
});
