import { Readable } from 'node:stream';
import { parseVocabulary } from './parse-vocabulary';
import type { ParsedTerm } from './parsed-term';

async function collect(source: string | Readable): Promise<ParsedTerm[]> {
  const terms: ParsedTerm[] = [];
  for await (const term of parseVocabulary(source, 'tsv')) terms.push(term);
  return terms;
}

describe('parseTsvVocabulary', () => {
  it('reads term_id<TAB>label lines with their line numbers', async () => {
    const terms = await collect("DOID:14330\tParkinson's disease\nDOID:9351\tdiabetes mellitus\n");
    expect(terms).toEqual([
      { termId: 'DOID:14330', label: "Parkinson's disease", line: 1 },
      { termId: 'DOID:9351', label: 'diabetes mellitus', line: 2 },
    ]);
  });

  it('skips blank lines, # comments and a header line, and tolerates CRLF and a BOM', async () => {
    const text =
      '\uFEFF# source: HGNC\r\n\r\nterm_id\tlabel\r\nHGNC:1100\tBRCA1\r\n   \r\n  # trailing note\r\nHGNC:1101\tBRCA2';
    const terms = await collect(text);
    expect(terms.map((t) => [t.termId, t.label, t.line])).toEqual([
      ['HGNC:1100', 'BRCA1', 4],
      ['HGNC:1101', 'BRCA2', 7],
    ]);
  });

  it('accepts an id<TAB>name header but treats the same text later in the file as data', async () => {
    await expect(collect('id\tname\nX:1\tone\n')).resolves.toHaveLength(1);
    await expect(collect('X:1\tone\nid\tname\n')).resolves.toEqual([
      { termId: 'X:1', label: 'one', line: 1 },
      { termId: 'id', label: 'name', line: 2 },
    ]);
  });

  it('trims whitespace around the id and the label', async () => {
    await expect(collect('  HP:0001250 \t Seizure  \n')).resolves.toEqual([
      { termId: 'HP:0001250', label: 'Seizure', line: 1 },
    ]);
  });

  it.each([
    [
      'a line without a tab',
      'X:1\tone\nX:2 two\n',
      'line 2: expected "term_id<TAB>label", found 1 tab-separated field(s)',
    ],
    [
      'a line with three fields',
      'X:1\tone\tuno\n',
      'line 1: expected "term_id<TAB>label", found 3 tab-separated field(s)',
    ],
    ['an empty id', '\tlabel\n', 'line 1: the term id is empty'],
    ['an empty label', '# c\nX:1\t  \n', 'line 2: the label of X:1 is empty'],
    ['an id with inner whitespace', 'X 1\tone\n', 'line 1: the term id "X 1" contains whitespace'],
    [
      'a duplicate id',
      'X:1\tone\nX:2\ttwo\nX:1\tagain\n',
      'line 3: duplicate term id X:1 (first seen on line 1)',
    ],
    [
      'an over-long id',
      `${'X'.repeat(201)}\tone\n`,
      'line 1: the term id is longer than 200 characters',
    ],
    [
      'an over-long label',
      `X:1\t${'a'.repeat(1001)}\n`,
      'line 1: the label of X:1 is longer than 1000 characters',
    ],
    [
      'a label of 1000 characters over 2000 bytes',
      `X:1\t${'字'.repeat(667)}\n`,
      'line 1: the label of X:1 is longer than 2000 bytes of UTF-8',
    ],
  ])('rejects %s with the line number', async (_case, text, message) => {
    await expect(collect(text)).rejects.toThrow(message);
  });

  it('reports the failing line even after many good ones', async () => {
    const good = Array.from({ length: 5000 }, (_, i) => `T:${i}\tterm ${i}`).join('\n');
    await expect(collect(`${good}\nbroken line\n`)).rejects.toMatchObject({ line: 5001 });
  });

  it('reads a byte stream whose chunks split lines and multi-byte characters', async () => {
    const bytes = Buffer.from('DOID:1\tSjögren syndrome\nDOID:2\tBehçet disease\n', 'utf8');
    const chunks = Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
    const terms = await collect(Readable.from(chunks));
    expect(terms.map((t) => t.label)).toEqual(['Sjögren syndrome', 'Behçet disease']);
  });

  it('yields terms before the end of the input is read', async () => {
    let releaseRest: () => void = () => undefined;
    const rest = new Promise<void>((resolve) => (releaseRest = resolve));
    async function* source(): AsyncGenerator<string> {
      yield 'X:1\tone\n';
      await rest;
      yield 'X:2\ttwo\n';
    }
    const iterator = parseVocabulary(Readable.from(source()), 'tsv');
    const first = await iterator.next();
    expect(first.value).toMatchObject({ termId: 'X:1' });
    releaseRest();
    const remaining: string[] = [];
    for await (const term of iterator) remaining.push(term.termId);
    expect(remaining).toEqual(['X:2']);
  });
});
