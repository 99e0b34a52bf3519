import { randomInt } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { AppError } from '@app/errors';
import { startCatalogApp, type CatalogTestApp } from '../../../test/support/catalog-app';
import { parseVocabulary } from '../src/terms/parsers/parse-vocabulary';
import { shippedVocabularyPath } from '../src/terms/shipped-vocabularies';
import { TERM_CATEGORIES } from '../src/terms/term-category';
import { TermsService } from '../src/terms/terms.service';
import { loadVocabulary } from '../src/terms/vocabulary-loader';

let t: CatalogTestApp;
let terms: TermsService;

beforeAll(async () => {
  t = await startCatalogApp();
  terms = t.app.get(TermsService);
});

afterAll(async () => {
  await t.close();
});

async function termRows(
  category: string,
): Promise<{ id: number; term_id: string; label: string }[]> {
  return t.dataSource.query(
    'SELECT id, term_id, label FROM terms WHERE category = $1 ORDER BY term_id',
    [category],
  );
}

async function countInFile(category: (typeof TERM_CATEGORIES)[number]): Promise<number> {
  let count = 0;
  for await (const _term of parseVocabulary(
    createReadStream(shippedVocabularyPath(category)),
    'tsv',
  ))
    count += 1;
  return count;
}

function oboOntology(size: number, brokenAt?: number): Readable {
  async function* lines(): AsyncGenerator<string> {
    yield 'format-version: 1.2\nontology: test\n\n';
    for (let i = 1; i <= size; i += 1) {
      if (i === brokenAt) yield 'this line is not an OBO tag\n';
      yield `[Term]\nid: TST:${i}\nname: test term ${i}\nsynonym: "alias" EXACT []\n${i % 5 === 0 ? 'is_obsolete: true\n' : ''}\n`;
    }
  }
  return Readable.from(lines());
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

describe('loading vocabularies', () => {
  it('loads the four shipped vocabularies, then finds nothing to change on a second run', async () => {
    const first = await terms.loadShippedVocabularies();
    for (const category of TERM_CATEGORIES) {
      const size = await countInFile(category);
      expect(first[category]).toEqual({ inserted: size, updated: 0, unchanged: 0, total: size });
    }
    const idsBefore = await termRows('disease');

    const second = await terms.loadShippedVocabularies();
    for (const category of TERM_CATEGORIES) {
      expect(second[category]).toMatchObject({
        inserted: 0,
        updated: 0,
        unchanged: first[category].total,
      });
    }
    expect(await termRows('disease')).toEqual(idsBefore);
    const [parkinson] = await t.dataSource.query(
      `SELECT label FROM terms WHERE category = 'disease' AND term_id = 'DOID:14330'`,
    );
    expect(parkinson).toEqual({ label: "Parkinson's disease" });
  });

  it('upserts by term id: new ids are inserted, changed labels updated, the rest untouched', async () => {
    await terms.loadVocabulary('study', 'X:1\tfirst\nX:2\tsecond\n', 'tsv');
    const [before] = await termRows('study').then((rows) =>
      rows.filter((row) => row.term_id === 'X:1'),
    );

    const counts = await terms.loadVocabulary(
      'study',
      'term_id\tlabel\nX:1\tfirst\nX:2\tsecond, renamed\nX:3\tthird\n',
      'tsv',
    );

    expect(counts).toEqual({ inserted: 1, updated: 1, unchanged: 1, total: 3 });
    const rows = (await termRows('study')).filter((row) => row.term_id.startsWith('X:'));
    expect(rows.map((row) => [row.term_id, row.label])).toEqual([
      ['X:1', 'first'],
      ['X:2', 'second, renamed'],
      ['X:3', 'third'],
    ]);
    expect(rows[0].id).toBe(before.id);
  });

  it('keeps terms of one category apart from the same ids in another', async () => {
    await terms.loadVocabulary('gene', 'SHARED:1\tin gene\n', 'tsv');
    await terms.loadVocabulary('phenotype', 'SHARED:1\tin phenotype\n', 'tsv');
    const rows: { category: string; label: string }[] = await t.dataSource.query(
      `SELECT category, label FROM terms WHERE term_id = 'SHARED:1' ORDER BY category`,
    );
    expect(rows).toEqual([
      { category: 'gene', label: 'in gene' },
      { category: 'phenotype', label: 'in phenotype' },
    ]);
  });

  it('streams a full OBO ontology over several batches, skipping obsolete terms', async () => {
    const counts = await terms.loadVocabulary('disease', oboOntology(2600), 'obo');
    expect(counts).toEqual({ inserted: 2080, updated: 0, unchanged: 0, total: 2080 });
    const [{ count }] = await t.dataSource.query(
      `SELECT count(*)::int AS count FROM terms WHERE category = 'disease' AND term_id LIKE 'TST:%'`,
    );
    expect(count).toBe(2080);
  });

  it('rejects a file with an error after the first batch with its line number, and changes nothing', async () => {
    const before = await termRows('phenotype');
    const error = await rejection(
      terms.loadVocabulary('phenotype', oboOntology(1800, 1500), 'obo'),
    );
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/^Invalid vocabulary file: line \d+: expected "tag: value"/);
    expect(error.more).toEqual({
      errors: [{ line: expect.any(Number), message: expect.stringContaining('tag: value') }],
    });
    expect(await termRows('phenotype')).toEqual(before);
  });

  it('loads labels up to what the search index holds and refuses longer ones by their bytes (400, not 500)', async () => {
    // Random letters: an index entry is compressed first, so repeated ones would fit anyway.
    const letters = (length: number, from: number, span: number) =>
      Array.from({ length }, () => String.fromCodePoint(from + randomInt(span))).join('');
    const fits = letters(1000, 0x430, 0x20); // Cyrillic: 2,000 bytes
    const long = () =>
      t.dataSource.query<{ term_id: string; label: string }[]>(
        `SELECT term_id, label FROM terms WHERE term_id LIKE 'LONG:%' ORDER BY term_id`,
      );
    const loaded = await terms.loadVocabulary('gene', `LONG:1\t${fits}\n`, 'tsv');
    expect(loaded).toMatchObject({ inserted: 1 });
    expect(await long()).toEqual([{ term_id: 'LONG:1', label: fits }]);
    const cjk = letters(1000, 0x4e00, 0x5000); // 3,000 bytes: more than a btree entry holds
    const error = await rejection(terms.loadVocabulary('gene', `LONG:2\t${cjk}\n`, 'tsv'));
    expect(error.status).toBe(400);
    expect(error.more).toEqual({
      errors: [{ line: 1, message: 'the label of LONG:2 is longer than 2000 bytes of UTF-8' }],
    });
    expect(await long()).toEqual([{ term_id: 'LONG:1', label: fits }]);
  });

  it('vacuums and analyses the terms table after a load that changed rows, not after one that did not', async () => {
    const maintenance = async (): Promise<{ vacuums: number; analyses: number }> => {
      const [row] = await t.dataSource.query(
        `SELECT vacuum_count::int AS vacuums, analyze_count::int AS analyses
           FROM pg_stat_user_tables WHERE relname = 'terms'`,
      );
      return row;
    };
    const before = await maintenance();
    await terms.loadVocabulary('gene', 'VAC:1\tvacuumed after loading\n', 'tsv');
    const after = await maintenance();
    expect(after).toEqual({ vacuums: before.vacuums + 1, analyses: before.analyses + 1 });
    await terms.loadVocabulary('gene', 'VAC:1\tvacuumed after loading\n', 'tsv');
    expect(await maintenance()).toEqual(after);
  });

  it('returns the counts of a committed load when the VACUUM after it fails, and logs why', async () => {
    // A data source whose VACUUM fails as behind a pooler that refuses it; the rest is real.
    const refusing = new Proxy(t.dataSource, {
      get(target, property) {
        if (property === 'query')
          return (sql: string, ...rest: unknown[]) =>
            sql.startsWith('VACUUM')
              ? Promise.reject(new Error('VACUUM is not allowed here'))
              : (target.query as (...args: unknown[]) => Promise<unknown>)(sql, ...rest);
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as DataSource;
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const counts = await loadVocabulary(refusing, 'gene', 'VAC:2\tloaded anyway\n', 'tsv');
      expect(counts).toMatchObject({ inserted: 1, total: 1 });
      expect(await termRows('gene')).toContainEqual(
        expect.objectContaining({ term_id: 'VAC:2', label: 'loaded anyway' }),
      );
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('VACUUM is not allowed here'));
    } finally {
      warn.mockRestore();
    }
  });

  it('rejects an unknown category with 404 and an unknown format with 400', async () => {
    expect((await rejection(terms.loadVocabulary('drugs', 'X:1\tx\n', 'tsv'))).status).toBe(404);
    expect((await rejection(terms.loadVocabulary('gene', 'X:1\tx\n', 'csv'))).status).toBe(400);
  });
});
