import { createReadStream } from 'node:fs';
import { Logger } from '@nestjs/common';
import type { Readable } from 'node:stream';
import type { DataSource, EntityManager } from 'typeorm';
import { parseVocabulary, type VocabularyFormat } from './parsers/parse-vocabulary';
import type { ParsedTerm } from './parsers/parsed-term';
import { shippedVocabularyPath } from './shipped-vocabularies';
import { TERM_CATEGORIES, type TermCategory } from './term-category';
import { TermsRepository } from './terms.repository';

/** What a load did: `total` terms read; each was inserted, had its label updated, or was unchanged. */
export interface VocabularyLoadCounts {
  inserted: number;
  updated: number;
  unchanged: number;
  total: number;
}

/** Rows per INSERT: 2 array parameters whatever the size, and a few hundred kB per statement. */
export const LOAD_BATCH_SIZE = 1000;

async function upsertBatch(
  terms: TermsRepository,
  manager: EntityManager,
  category: TermCategory,
  batch: ParsedTerm[],
  counts: VocabularyLoadCounts,
): Promise<void> {
  const { inserted, updated } = await terms.upsertBatch(manager, category, batch);
  counts.inserted += inserted;
  counts.updated += updated;
  counts.unchanged += batch.length - inserted - updated;
  counts.total += batch.length;
}

/**
 * Streams a vocabulary file into the `terms` table of one category, in batches, inside one
 * transaction: a file with an error anywhere (reported with its line number) changes nothing.
 * Terms missing from the file are kept, because projects may still reference them.
 */
export async function loadVocabulary(
  dataSource: DataSource,
  category: TermCategory,
  source: string | Readable,
  format: VocabularyFormat,
): Promise<VocabularyLoadCounts> {
  // Built from the data source given: a test hands in one whose VACUUM fails.
  const terms = new TermsRepository(dataSource);
  const counts = await dataSource.transaction(async (manager) => {
    const counts: VocabularyLoadCounts = { inserted: 0, updated: 0, unchanged: 0, total: 0 };
    let batch: ParsedTerm[] = [];
    for await (const term of parseVocabulary(source, format)) {
      batch.push(term);
      if (batch.length === LOAD_BATCH_SIZE) {
        await upsertBatch(terms, manager, category, batch, counts);
        batch = [];
      }
    }
    if (batch.length > 0) await upsertBatch(terms, manager, category, batch, counts);
    return counts;
  });
  if (counts.inserted + counts.updated > 0) await tidyAfterLoad(terms);
  return counts;
}

/**
 * Term search walks the label index with index-only scans, which read the table too until
 * VACUUM has marked the new rows all-visible (a search then took about twice as long), and its
 * plans need the new labels in the statistics. Autovacuum would get there within minutes; a load
 * is rare and this takes a fraction of a second, so the searches right after it are fast too.
 * Outside the load's transaction (VACUUM cannot run in one); without ownership of the table
 * Postgres skips it with a warning. The load has committed by then, so a failure here (a
 * statement timeout, a pooler that refuses VACUUM) is logged, not reported as a failed load.
 */
async function tidyAfterLoad(terms: TermsRepository): Promise<void> {
  try {
    await terms.vacuum();
  } catch (error) {
    new Logger('VocabularyLoader').warn(
      `terms loaded, but VACUUM (ANALYZE) terms failed; autovacuum will catch up: ${(error as Error).message}`,
    );
  }
}

/**
 * Loads the four vocabularies shipped with the catalog. Idempotent: a second run reports every
 * term as unchanged and writes nothing.
 */
export async function loadShippedVocabularies(
  dataSource: DataSource,
): Promise<Record<TermCategory, VocabularyLoadCounts>> {
  const result = {} as Record<TermCategory, VocabularyLoadCounts>;
  for (const category of TERM_CATEGORIES) {
    result[category] = await loadVocabulary(
      dataSource,
      category,
      createReadStream(shippedVocabularyPath(category)),
      'tsv',
    );
  }
  return result;
}
