import request from 'supertest';
import type { Server } from 'node:http';
import {
  CatalogTestApp,
  startCatalogApp,
  TEST_GLOBAL_KEY,
} from '../../../test/support/catalog-app';
import { DatasetExportsRefresher } from '../src/datasets/dataset-exports-refresher';
import { loadDemoData } from '../src/demo/demo-data-loader';
import { FdpService } from '../src/fdp/fdp.service';
import { FastReads } from '../src/read-cache/fast-reads';
import { CatalogVersionTracker } from '../src/catalog-version/catalog-version-tracker';
import { viewerIdentity } from '../src/auth/viewer';
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
/**
 * The demo data's exports are refreshed in the background (a write): each test starts once that
 * is done and the version tracker vouches for the version again.
 */
async function settled(t: CatalogTestApp): Promise<void> {
  await t.app.get(DatasetExportsRefresher).settled();
  await t.versionSettled();
}

/** A GET with the headers given (an undefined one is not sent). */
function getWith(server: Server, path: string, headers: Record<string, string | undefined>) {
  let req = request(server).get(path);
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) req = req.set(name, value);
  return req;
}

/** The headers of a Turtle read with `key` (none when undefined). */
const as = (key: string | undefined, extra: Record<string, string> = {}) => ({
  'X-API-Key': key,
  Accept: 'text/turtle',
  ...extra,
});

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
  beforeEach(() => settled(t));

  const get = (path: string, headers: Record<string, string | undefined>) =>
    getWith(t.server, path, headers);

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

  it(`holds at most ETAG_INDEX_MAX_ENTRIES tags (${TAGS_KEPT} here): the oldest are derived again, still 304 before the framework`, async () => {
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
    // Not held any more, but derived from the version, the key and the request.
    expect(evicted).toBe(0);
    expect(fastReads.tagUsage().entries).toBe(TAGS_KEPT);
  });
});

/**
 * Conditional GETs of FAIR Data Point records held by no index at all (ETAG_INDEX_MAX_ENTRIES=0,
 * one fast-read entry): the tag is derived in front of the framework from the data version, the
 * caller's key as the framework identified it at that version, the URL and the negotiated type
 * (docs/decisions/fdp-derived-tags.md). What may not be derived goes to the framework, which
 * decides as before.
 */
describe('FDP conditional GETs with derived tags', () => {
  let t: CatalogTestApp;
  let draft: string;
  let published: string[];

  beforeAll(async () => {
    t = await startCatalogApp({
      ...DCAT_TEST_ENV,
      RESPONSE_CACHE_MAX_ENTRIES: '1',
      ETAG_INDEX_MAX_ENTRIES: '0',
    });
    await loadDemoData(t.app, DEMO_KEYS);
    const exposed = `EXISTS (SELECT 1 FROM exposures e WHERE e.dataset_id = d.id AND e.deprecated_at IS NULL)`;
    const rows = await t.dataSource.query<{ elu_accession: string }[]>(
      `SELECT d.elu_accession FROM datasets d WHERE ${exposed} ORDER BY d.id LIMIT 3`,
    );
    published = rows.map((r) => `/fdp/dataset/${r.elu_accession}`);
    // A draft: the global key sees it, an anonymous caller does not (no exposure).
    const hidden = await t.dataSource.query<{ elu_accession: string }[]>(
      `INSERT INTO datasets (title, description, project_id)
       SELECT 'FDP draft', 'Not published', id FROM projects ORDER BY id LIMIT 1
       RETURNING elu_accession`,
    );
    draft = `/fdp/dataset/${hidden[0].elu_accession}`;
  });
  afterAll(() => t.close());
  beforeEach(() => settled(t));

  const get = (path: string, headers: Record<string, string | undefined>) =>
    getWith(t.server, path, headers);
  /** What the framework's FDP controller answered during `work`, and the statements sent. */
  async function frameworkDuring(work: () => Promise<unknown>) {
    const spy = jest.spyOn(t.app.get(FdpService), 'answer');
    try {
      const queries = await queriesDuring(work);
      return { framework: spy.mock.calls.length, queries };
    } finally {
      spy.mockRestore();
    }
  }

  it('answers 304 for records no index holds, keyed and anonymous, with no query and no framework', async () => {
    const tags = new Map<string, string>();
    for (const key of [TEST_GLOBAL_KEY, undefined])
      for (const path of published) {
        const res = await get(path, as(key)).expect(200);
        tags.set(`${key}|${path}`, res.headers.etag);
      }
    const fastReads = t.app.get(FastReads);
    expect(fastReads.usage().entries).toBe(1);
    expect(fastReads.tagUsage().entries).toBe(0);
    const answered = await frameworkDuring(async () => {
      for (const key of [TEST_GLOBAL_KEY, undefined])
        for (const path of published) {
          const res = await get(
            path,
            as(key, { 'If-None-Match': tags.get(`${key}|${path}`)! }),
          ).expect(304);
          expect(res.headers.etag).toBe(tags.get(`${key}|${path}`));
          expect(res.headers.vary).toBe('Accept, X-API-Key, Authorization');
          expect(res.headers['cache-control']).toBe('no-cache');
          expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
          for (const name of ['content-type', 'link', 'last-modified'])
            expect(res.headers[name]).toBeUndefined();
        }
    });
    expect(answered).toEqual({ framework: 0, queries: 0 });
    // A tag of another type, caller or record is no match: the framework answers 200.
    const [first, second] = published;
    const other = await frameworkDuring(async () => {
      await get(
        first,
        as(undefined, { 'If-None-Match': tags.get(`${TEST_GLOBAL_KEY}|${first}`)! }),
      ).expect(200);
      await get(
        first,
        as(TEST_GLOBAL_KEY, { 'If-None-Match': tags.get(`undefined|${first}`)! }),
      ).expect(200);
      await get(
        second,
        as(TEST_GLOBAL_KEY, { 'If-None-Match': tags.get(`${TEST_GLOBAL_KEY}|${first}`)! }),
      ).expect(200);
      await get(first, {
        ...as(TEST_GLOBAL_KEY, { 'If-None-Match': tags.get(`${TEST_GLOBAL_KEY}|${first}`)! }),
        Accept: 'application/ld+json',
      }).expect(200);
    });
    expect(other.framework).toBe(4);
  });

  it('derives only for a key the framework identified at this data version, never across a change', async () => {
    const path = published[0];
    const target = { kind: 'dataset' as const, accession: path.split('/').pop()! };
    const before = await get(path, as(TEST_GLOBAL_KEY)).expect(200);
    const held = await frameworkDuring(() =>
      get(path, as(TEST_GLOBAL_KEY, { 'If-None-Match': before.headers.etag })).expect(304),
    );
    expect(held.framework).toBe(0);
    // A data change: the old tag gets the new record from the framework.
    await t.dataSource.query(
      `UPDATE datasets SET title = title || ' (renamed)' WHERE elu_accession = $1`,
      [target.accession],
    );
    // The stored exports follow a dataset's change (a write too): wait for both.
    await t.app.get(DatasetExportsRefresher).settled();
    await t.versionSettled();
    const changed = await frameworkDuring(() =>
      get(path, as(TEST_GLOBAL_KEY, { 'If-None-Match': before.headers.etag })).expect(200),
    );
    expect(changed.framework).toBe(1);
    // Another change: the key was identified at the version before, so even the right tag of
    // the new version goes to the framework once (which checks the key again), then not.
    await t.dataSource.query(`UPDATE datasets SET title = title || '.' WHERE elu_accession = $1`, [
      target.accession,
    ]);
    // The stored exports follow a dataset's change (a write too): wait for both.
    await t.app.get(DatasetExportsRefresher).settled();
    await t.versionSettled();
    const version = t.app.get(CatalogVersionTracker).known()!;
    const identity = viewerIdentity({ kind: 'global', name: 'global', canWrite: true });
    const tag = t.app.get(FdpService).tagOf(version, identity, target, 'ttl');
    for (const framework of [1, 0]) {
      const again = await frameworkDuring(() =>
        get(path, as(TEST_GLOBAL_KEY, { 'If-None-Match': tag })).expect(304),
      );
      expect(again.framework).toBe(framework);
    }
    // An unknown key is never derived: the framework refuses it, whatever tag it names.
    const anonymous = await get(path, as(undefined)).expect(200);
    const bogus = await frameworkDuring(() =>
      get(
        path,
        as('not-a-key-of-this-catalog-0123456789', { 'If-None-Match': anonymous.headers.etag }),
      ).expect(401),
    );
    expect(bogus.framework).toBe(0);
  });

  it("never turns a 404 into a 304: a record the caller may not see is the framework's to refuse", async () => {
    const keyed = await get(draft, as(TEST_GLOBAL_KEY)).expect(200);
    // The tag a key that sees the dataset was given is no tag of an anonymous caller's.
    const refused = await frameworkDuring(() =>
      get(draft, as(undefined, { 'If-None-Match': keyed.headers.etag })).expect(404),
    );
    expect(refused.framework).toBe(1);
    // A tag made up for an anonymous caller says nothing either way: an unpublished dataset
    // and one that does not exist are answered alike (the tag is derived from no record data).
    const version = t.app.get(CatalogVersionTracker).known()!;
    const service = t.app.get(FdpService);
    const madeUp = (path: string) =>
      service.tagOf(
        version,
        'anonymous',
        { kind: 'dataset', accession: path.split('/').pop()! },
        'ttl',
      );
    const missing = '/fdp/dataset/ELU_I_999999';
    const statuses = [];
    for (const path of [draft, missing])
      statuses.push((await get(path, as(undefined, { 'If-None-Match': madeUp(path) }))).status);
    expect(statuses[0]).toBe(statuses[1]);
    // Without a tag: 404 for both.
    await get(draft, as(undefined)).expect(404);
    await get(missing, as(undefined)).expect(404);
  });

  it('leaves other spellings of a URL, and keys in the query, to the framework', async () => {
    const path = published[1];
    const res = await get(path, as(TEST_GLOBAL_KEY)).expect(200);
    const tag = res.headers.etag;
    // Each is the framework's: its 304 (the same record to it), or its refusal (a URL the
    // router does not take as the record), never a 304 from in front of it.
    const spellings: [string, string | undefined][] = [
      [`${path}/`, TEST_GLOBAL_KEY],
      [`${path}?utm=1`, TEST_GLOBAL_KEY],
      [`${path}?API_KEY=${TEST_GLOBAL_KEY}`, undefined],
    ];
    for (const [url, key] of spellings) {
      let status = 0;
      const through = await frameworkDuring(async () => {
        status = (await get(url, as(key, { 'If-None-Match': tag }))).status;
      });
      expect([url, status === 304 ? through.framework : status]).toEqual([
        url,
        status === 304 ? 1 : expect.any(Number),
      ]);
      expect([304, 400, 401, 404]).toContain(status);
    }
    const derived = await frameworkDuring(() =>
      get(`${path}?format=ttl`, {
        ...as(TEST_GLOBAL_KEY, { 'If-None-Match': tag }),
        Accept: 'application/ld+json',
      }).expect(304),
    );
    expect(derived.framework).toBe(0);
  });
});
