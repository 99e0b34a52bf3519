import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from 'pg';
import { prng } from '../../lib/prng';
import { ROOT } from '../lib/processes';

const VOCABULARIES = join(ROOT, 'apps/catalog-api/src/terms/vocabularies');

/** The words of the shipped DOID and HPO labels: synthetic terms read like real ones. */
function realWords(): string[] {
  const words = new Set<string>();
  for (const file of ['disease.tsv', 'phenotype.tsv']) {
    for (const line of readFileSync(join(VOCABULARIES, file), 'utf8').split('\n')) {
      if (line.startsWith('#') || !line.includes('\t')) continue;
      for (const word of line.split('\t')[1].toLowerCase().split(/[\s,()]+/)) {
        if (/^[a-z][a-z-]{2,}$/.test(word)) words.add(word);
      }
    }
  }
  return [...words].sort();
}

/**
 * Inserts `count` terms of 2–5 real words into one category (the worst case: every search
 * scans one big category), in batches through unnest. Returns a few labels that exist.
 */
export async function generateTerms(client: Client, category: string, count: number): Promise<string[]> {
  const words = realWords();
  const random = prng(42);
  const batch = 10_000;
  const samples: string[] = [];
  for (let start = 0; start < count; start += batch) {
    const ids: string[] = [];
    const labels: string[] = [];
    for (let i = start; i < Math.min(count, start + batch); i++) {
      const length = 2 + Math.floor(random() * 4);
      const label = Array.from({ length }, () => words[Math.floor(random() * words.length)]).join(' ');
      ids.push(`BENCH:${String(i).padStart(7, '0')}`);
      labels.push(label.charAt(0).toUpperCase() + label.slice(1));
      if (i % 20_000 === 7) samples.push(labels[labels.length - 1]);
    }
    await client.query(
      `INSERT INTO terms (category, term_id, label) SELECT $1, * FROM unnest($2::text[], $3::text[])`,
      [category, ids, labels],
    );
  }
  // As the catalog's vocabulary loader leaves the table after a load (vocabulary-loader.ts).
  await client.query('VACUUM (ANALYZE) terms');
  return samples;
}
