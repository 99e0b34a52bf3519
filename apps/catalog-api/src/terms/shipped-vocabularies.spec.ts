import { createReadStream } from 'node:fs';
import { parseVocabulary } from './parsers/parse-vocabulary';
import { shippedVocabularyPath } from './shipped-vocabularies';
import { TERM_CATEGORIES, type TermCategory } from './term-category';

const ID_PATTERN: Record<TermCategory, RegExp> = {
  disease: /^DOID:\d+$/,
  phenotype: /^HP:\d{7}$/,
  study: /^STUDY:\d{4}$/,
  gene: /^HGNC:\d+$/,
};

const MINIMUM_SIZE: Record<TermCategory, number> = {
  disease: 300,
  phenotype: 290,
  study: 50,
  gene: 190,
};

describe('shipped vocabularies', () => {
  it.each(TERM_CATEGORIES)('%s.tsv parses cleanly with ids of its ontology', async (category) => {
    const ids: string[] = [];
    for await (const term of parseVocabulary(
      createReadStream(shippedVocabularyPath(category)),
      'tsv',
    )) {
      expect(term.termId).toMatch(ID_PATTERN[category]);
      ids.push(term.termId);
    }
    expect(ids.length).toBeGreaterThanOrEqual(MINIMUM_SIZE[category]);
  });

  it('keeps well-known anchors (guards against accidental edits of the data files)', async () => {
    const anchors: [TermCategory, string, string][] = [
      ['disease', 'DOID:14330', "Parkinson's disease"],
      ['disease', 'DOID:9351', 'diabetes mellitus'],
      ['phenotype', 'HP:0001252', 'Hypotonia'],
      ['phenotype', 'HP:0000118', 'Phenotypic abnormality'],
      ['gene', 'HGNC:1100', 'BRCA1'],
      ['gene', 'HGNC:5', 'A1BG'],
    ];
    for (const [category, termId, label] of anchors) {
      const found = new Map<string, string>();
      for await (const term of parseVocabulary(
        createReadStream(shippedVocabularyPath(category)),
        'tsv',
      )) {
        found.set(term.termId, term.label);
      }
      expect(found.get(termId)).toBe(label);
    }
  });
});
