import request from 'supertest';
import { startCatalogApp, type CatalogTestApp } from '../../../test/support/catalog-app';
import { TermsService } from '../src/terms/terms.service';

let t: CatalogTestApp;

const DISEASES = [
  'D:1\tprediabetes',
  'D:2\tDiabetes insipidus',
  'D:3\ttype 2 diabetes mellitus',
  'D:4\tDiabetes',
  'D:5\tdiabetes mellitus',
  'D:6\tasthma',
  'D:7\t100% remission_state',
  'D:8\t100 percent remission state',
  'D:9\tback\\slash 100%_ long label',
];
// 60 labels containing "syndrome", none equal to it and 10 starting with it.
const SYNDROMES = Array.from({ length: 60 }, (_, i) =>
  i < 10
    ? `S:${i}\tsyndrome variant ${String(i).padStart(2, '0')}`
    : `S:${i}\tcase ${String(i).padStart(2, '0')} syndrome`,
);

beforeAll(async () => {
  t = await startCatalogApp();
  const terms = t.app.get(TermsService);
  await terms.loadVocabulary('disease', [...DISEASES, ...SYNDROMES].join('\n'), 'tsv');
  await terms.loadVocabulary('phenotype', 'P:1\tDiabetes-like phenotype\n', 'tsv');
});

afterAll(async () => {
  await t.close();
});

function search(category: string, query: Record<string, string | string[]>): request.Test {
  return request(t.server).get(`/api/termsearch/${category}`).query(query);
}

function texts(body: { results: { text: string }[] }): string[] {
  return body.results.map((result) => result.text);
}

/** What the contract says a search returns, computed from the labels without the database. */
function contractOrder(labels: string[], text: string): string[] {
  const needle = text.toLowerCase();
  const rank = (label: string): number =>
    label.toLowerCase() === needle ? 0 : label.toLowerCase().startsWith(needle) ? 1 : 2;
  const byteOrder = (a: string, b: string): number =>
    Buffer.compare(Buffer.from(a.toLowerCase()), Buffer.from(b.toLowerCase()));
  return labels
    .filter((label) => label.toLowerCase().includes(needle))
    .sort((a, b) => rank(a) - rank(b) || byteOrder(a, b));
}

/** Every page of a search, in order, as texts. */
async function everyPage(category: string, text: string): Promise<string[]> {
  const found: string[] = [];
  for (let page = 1; ; page++) {
    const body = (await search(category, { search: text, page: String(page) }).expect(200))
      .body as { results: { text: string }[]; pagination: { more: boolean } };
    found.push(...texts(body));
    if (!body.pagination.more) return found;
  }
}

describe('GET /api/termsearch/{category}', () => {
  it('ranks exact matches first, then prefixes, then the rest, each by label, case-insensitively', async () => {
    const response = await search('disease', { search: 'DIABETES', page: '1' }).expect(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(texts(response.body)).toEqual([
      'Diabetes',
      'Diabetes insipidus',
      'diabetes mellitus',
      'prediabetes',
      'type 2 diabetes mellitus',
    ]);
  });

  it('answers in the Select2 shape with the database id and the ontology id', async () => {
    const response = await search('disease', { search: 'asthma', page: '1' }).expect(200);
    const [{ id }] = await t.dataSource.query(`SELECT id FROM terms WHERE term_id = 'D:6'`);
    expect(response.body).toEqual({
      results: [{ id, text: 'asthma', term_id: 'D:6' }],
      pagination: { more: false },
    });
  });

  it('searches only the requested category', async () => {
    const response = await search('phenotype', { search: 'diabetes', page: '1' }).expect(200);
    expect(texts(response.body)).toEqual(['Diabetes-like phenotype']);
  });

  it('pages by 25 in a stable order and says whether more follow', async () => {
    const pages = [];
    for (const page of ['1', '2', '3']) {
      pages.push((await search('disease', { search: 'syndrome', page }).expect(200)).body);
    }
    expect(pages.map((body) => [body.results.length, body.pagination.more])).toEqual([
      [25, true],
      [25, true],
      [10, false],
    ]);
    const all = pages.flatMap(texts);
    expect(new Set(all).size).toBe(60);
    expect(all.slice(0, 10)).toEqual(
      Array.from({ length: 10 }, (_, i) => `syndrome variant 0${i}`),
    );
    expect(all.slice(10)).toEqual([...all.slice(10)].sort());
  });

  it('answers a page past the last with 400 naming page, and page 1 of nothing with an empty list', async () => {
    const past = await search('disease', { search: 'syndrome', page: '4' }).expect(400);
    expect(past.body).toMatchObject({ status: 'Error', more: { errors: [{ parameter: 'page' }] } });
    const nothing = await search('disease', { search: 'no such term', page: '1' }).expect(200);
    expect(nothing.body).toEqual({ results: [], pagination: { more: false } });
    await search('disease', { search: 'no such term', page: '2' }).expect(400);
  });

  it('matches % and _ literally', async () => {
    expect(
      texts((await search('disease', { search: '0% r', page: '1' }).expect(200)).body),
    ).toEqual(['100% remission_state']);
    expect(texts((await search('disease', { search: 'n_s', page: '1' }).expect(200)).body)).toEqual(
      ['100% remission_state'],
    );
  });

  it('finds one- and two-character searches too', async () => {
    const response = await search('disease', { search: 'y', page: '1' }).expect(200);
    expect(response.body.results).toHaveLength(25);
    expect(response.body.pagination.more).toBe(true);
  });

  // Short searches take another query shape (the 1–2-character substring index); the results
  // must be what the contract says, computed here independently from every label.
  // Long searches (over LONG_SEARCH_WINDOW characters) too: they find rows by their first
  // characters only, with LIKE metacharacters and a backslash inside and outside that window.
  it.each([
    'y',
    'S',
    'iA',
    'e ',
    '0',
    '%',
    '2 ',
    'zq',
    '-',
    'syndrome variant 0',
    '100% remission_stat',
    '0% remission_state',
    'k\\slash 100%_ long',
    'slash 100%_ long l',
    'syndrome variant 0x',
  ])('answers the search %p with every match in contract order', async (text) => {
    const labels = [...DISEASES, ...SYNDROMES].map((line) => line.split('\t')[1]);
    expect(await everyPage('disease', text)).toEqual(contractOrder(labels, text));
  });

  // The "anywhere" rank first walks the first 100 labels per result needed (2,600 for page 1)
  // in label order and falls back to an index lookup of every match when the walk finds too
  // few. 3,000 labels put matches on both sides of where the walk stops.
  describe('in a category larger than the label walk', () => {
    let labels: string[];

    beforeAll(async () => {
      const lines = Array.from({ length: 3000 }, (_, i) => {
        const number = String(i).padStart(4, '0');
        const words = [
          i % 3 === 0 ? 'often' : '',
          i % 120 === 7 ? 'mid' : '',
          i === 100 || i === 2900 ? 'rare' : '',
          i === 50 || i === 2950 ? 'qz' : '',
        ];
        return `T:${number}\tstudy ${number} ${words.filter(Boolean).join(' ')}`.trimEnd();
      });
      // Labels that start with the search sort before the others and are the prefix rank.
      for (let i = 0; i < 200; i++) lines.push(`O:${i}\toften first ${i}`);
      await t.app.get(TermsService).loadVocabulary('study', lines.join('\n'), 'tsv');
      const rows: { label: string }[] = await t.dataSource.query(
        `SELECT label FROM terms WHERE category = 'study'`,
      );
      labels = rows.map((row) => row.label);
    });

    it.each([
      ['often', 'a third of the labels, after 200 that start with it: the walk fills every page'],
      ['mid', '20 matches in the walk, 5 after it'],
      ['rare', 'one match in the walk, one after it'],
      ['qz', 'two characters, one match in the walk, one after it'],
      ['y 29', 'every match after the walk'],
    ])('answers %p (%s) with every match in contract order', async (text) => {
      const expected = contractOrder(labels, text);
      expect(expected.length).toBeGreaterThan(1);
      expect(await everyPage('study', text)).toEqual(expected);
    });

    // Deep pages (over 250 rows needed) also ask whether the walk read the whole category; here
    // it did not: page 10 needs 251 rows, the walk reads 25,100 of 30,000 labels and finds 228.
    it('answers deep pages whose walk stopped short of the end of a large category', async () => {
      await t.dataSource.query(
        `INSERT INTO terms (category, term_id, label)
         SELECT 'phenotype', 'BULK:' || i, 'phenotype ' || lpad(i::text, 5, '0')
                || CASE WHEN i % 110 = 0 THEN ' seldom' ELSE '' END
           FROM generate_series(1, 30000) AS i`,
      );
      const rows: { label: string }[] = await t.dataSource.query(
        `SELECT label FROM terms WHERE category = 'phenotype'`,
      );
      const expected = contractOrder(
        rows.map((row) => row.label),
        'seldom',
      );
      expect(expected).toHaveLength(272);
      expect(await everyPage('phenotype', 'seldom')).toEqual(expected);
    });
  });

  it('searches a reloaded label by its new text only (the stored lower-case label follows it)', async () => {
    const terms = t.app.get(TermsService);
    await terms.loadVocabulary('gene', 'G:1\tQX old name\n', 'tsv');
    await terms.loadVocabulary('gene', 'G:1\tZK New Name\n', 'tsv');
    for (const text of ['zk', 'k', 'new name']) {
      expect(texts((await search('gene', { search: text, page: '1' }).expect(200)).body)).toEqual([
        'ZK New Name',
      ]);
    }
    for (const text of ['qx', 'old']) {
      expect(texts((await search('gene', { search: text, page: '1' }).expect(200)).body)).toEqual(
        [],
      );
    }
  });

  it.each([
    ['search missing', { page: '1' }, 'search'],
    ['search empty', { search: '', page: '1' }, 'search'],
    ['search of 201 characters', { search: 'x'.repeat(201), page: '1' }, 'search'],
    ['search given twice', { search: ['a', 'b'], page: '1' }, 'search'],
    ['page missing', { search: 'a' }, 'page'],
    ['page 0', { search: 'a', page: '0' }, 'page'],
    ['page x', { search: 'a', page: 'x' }, 'page'],
    ['page -1', { search: 'a', page: '-1' }, 'page'],
    ['page 1.5', { search: 'a', page: '1.5' }, 'page'],
    ['page beyond any possible result', { search: 'a', page: '99999999999' }, 'page'],
  ])('rejects %s with 400 naming the parameter', async (_case, query, parameter) => {
    const response = await search('disease', query).expect(400);
    expect(response.body).toMatchObject({ status: 'Error', more: { errors: [{ parameter }] } });
  });

  it('accepts a search of exactly 200 characters', async () => {
    await search('disease', { search: 'x'.repeat(200), page: '1' }).expect(200);
  });

  it('answers an unknown category with 404 in the envelope, before checking parameters', async () => {
    const response = await search('drugs', {}).expect(404);
    expect(response.body).toMatchObject({ status: 'Error', more: {} });
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('is public: no key is needed and a sent key is not checked', async () => {
    await search('disease', { search: 'asthma', page: '1' })
      .set('X-API-Key', 'not-a-real-key')
      .expect(200);
  });

  it('answers HEAD without a body', async () => {
    const response = await request(t.server)
      .head('/api/termsearch/disease?search=asthma&page=1')
      .expect(200);
    expect(response.text).toBeUndefined();
  });

  it('answers other methods with 405', async () => {
    await request(t.server).post('/api/termsearch/disease').send({}).expect(405);
  });
});
