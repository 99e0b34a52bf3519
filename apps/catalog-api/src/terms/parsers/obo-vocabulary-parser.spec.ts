import { Readable } from 'node:stream';
import { parseVocabulary } from './parse-vocabulary';
import type { ParsedTerm } from './parsed-term';

async function collect(source: string | Readable): Promise<ParsedTerm[]> {
  const terms: ParsedTerm[] = [];
  for await (const term of parseVocabulary(source, 'obo')) terms.push(term);
  return terms;
}

const SAMPLE = `format-version: 1.2
data-version: hp/releases/2026-09-01
ontology: hp.obo

[Term]
id: HP:0000001
name: All
comment: Root of all terms in the Human Phenotype Ontology.

[Term]
id: HP:0000002
name: Abnormality of body height
def: "Deviation from the norm of height." [https://orcid.org/0000-0002-0736-9199]
synonym: "Abnormality of body height" EXACT layperson []
is_a: HP:0001507 ! Growth abnormality

[Term]
id: HP:0000057
name: obsolete Clitoromegaly
is_obsolete: true
replaced_by: HP:0008665

[Typedef]
id: part_of
name: part of

[Term]
id: HP:0001250
name: Seizure
`;

describe('parseOboVocabulary', () => {
  it('keeps id and name of each [Term], skips obsolete terms, other stanzas and the header', async () => {
    const terms = await collect(SAMPLE);
    expect(terms).toEqual([
      { termId: 'HP:0000001', label: 'All', line: 5 },
      { termId: 'HP:0000002', label: 'Abnormality of body height', line: 10 },
      { termId: 'HP:0001250', label: 'Seizure', line: 27 },
    ]);
  });

  it('skips an obsolete term even when it has no name', async () => {
    await expect(
      collect('[Term]\nid: X:1\nis_obsolete: true\n\n[Term]\nid: X:2\nname: two\n'),
    ).resolves.toEqual([{ termId: 'X:2', label: 'two', line: 5 }]);
  });

  it('keeps a term whose is_obsolete is false', async () => {
    await expect(collect('[Term]\nid: X:1\nname: one\nis_obsolete: false\n')).resolves.toHaveLength(
      1,
    );
  });

  it('removes trailing comments and modifiers and resolves escapes', async () => {
    const text = '[Term]\nid: X:1 ! the first\nname: Wow\\! a \\{braced\\} name {source="x"}\n';
    await expect(collect(text)).resolves.toEqual([
      { termId: 'X:1', label: 'Wow! a {braced} name', line: 1 },
    ]);
  });

  it('reads CRLF files and ignores ! comment lines inside a stanza', async () => {
    const text = '[Term]\r\n! a comment line\r\nid: X:1\r\nname: one\r\n';
    await expect(collect(text)).resolves.toEqual([{ termId: 'X:1', label: 'one', line: 1 }]);
  });

  it('returns nothing for a file without [Term] stanzas', async () => {
    await expect(collect('format-version: 1.2\nontology: empty\n')).resolves.toEqual([]);
  });

  it.each([
    [
      'a malformed stanza header',
      '[Term]\nid: X:1\nname: one\n[Term\nid: X:2\n',
      'line 4: malformed stanza header "[Term"',
    ],
    [
      'a stanza without id',
      'format-version: 1.2\n\n[Term]\nname: nameless\n',
      'line 3: the [Term] stanza has no "id:"',
    ],
    [
      'a live term without name',
      '[Term]\nid: X:1\n\n[Term]\nid: X:2\nname: two\n',
      'line 1: the [Term] stanza of X:1 has no "name:"',
    ],
    [
      'a line that is not tag: value',
      '[Term]\nid: X:1\nname one\n',
      'line 3: expected "tag: value" in a [Term] stanza, found "name one"',
    ],
    [
      'two ids in one stanza',
      '[Term]\nid: X:1\nid: X:2\nname: n\n',
      'line 3: a second "id:" in the [Term] stanza starting on line 1',
    ],
    [
      'two names in one stanza',
      '[Term]\nid: X:1\nname: a\nname: b\n',
      'line 4: a second "name:" in the [Term] stanza starting on line 1',
    ],
    [
      'a duplicate id across stanzas',
      '[Term]\nid: X:1\nname: a\n\n[Term]\nid: X:1\nname: b\n',
      'line 5: duplicate term id X:1 (first seen on line 1)',
    ],
    ['an empty name', '[Term]\nid: X:1\nname:   \n', 'line 1: the label of X:1 is empty'],
  ])('rejects %s with the line number', async (_case, text, message) => {
    await expect(collect(text)).rejects.toThrow(message);
  });

  it('streams a large ontology from a byte stream', async () => {
    async function* ontology(): AsyncGenerator<string> {
      yield 'format-version: 1.2\n\n';
      for (let i = 0; i < 20000; i += 1) {
        yield `[Term]\nid: T:${i}\nname: term ${i}\nsynonym: "alias ${i}" EXACT []\n${i % 10 === 0 ? 'is_obsolete: true\n' : ''}\n`;
      }
    }
    let count = 0;
    let last: ParsedTerm | undefined;
    for await (const term of parseVocabulary(Readable.from(ontology()), 'obo')) {
      count += 1;
      last = term;
    }
    expect(count).toBe(18000);
    expect(last).toMatchObject({ termId: 'T:19999', label: 'term 19999' });
  });
});
