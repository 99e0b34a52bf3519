import { CappedProblems, ValidationFailedError } from '@app/errors';
import { forEachTimeSliced } from '@app/platform';
import { datasetItemProblems } from './dataset-rules';
import { DatasetInput, IMPORT_KINDS, ITEM_SHAPES, ImportKind } from './import-shapes';
import type { ShapeProblem } from './shape-validators';

/** Top-level keys of a document besides `items` that exports and ELU documents carry. */
const IGNORED_TOP_LEVEL = new Set(['$schema']);

/**
 * Checks the whole document's structure before anything touches the database: every problem
 * of every item, with its index and field path (the first MAX_REPORTED_PROBLEMS listed, all
 * counted). The records are checked in slices of the event loop, so health probes and other
 * requests are answered while a large document is checked.
 */
export async function parseDocument(kind: ImportKind, body: unknown): Promise<unknown[]> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ValidationFailedError([
      { field: 'items', message: 'the body must be an object {"items": [...]}' },
    ]);
  }
  const document = body as Record<string, unknown>;
  // Partner and cohort exports wrap their records in `results`: accepted so they import as is.
  const wrapper = 'items' in document || !('results' in document) ? 'items' : 'results';
  const problems = new CappedProblems();
  for (const key of Object.keys(document)) {
    if (key !== wrapper && !IGNORED_TOP_LEVEL.has(key))
      problems.add({ field: key, message: 'unknown field' });
  }
  const records = document[wrapper];
  if (!Array.isArray(records)) {
    problems.add({ field: 'items', message: 'is required and must be an array' });
    throw new ValidationFailedError(problems);
  }
  const shape = ITEM_SHAPES[kind];
  const items = new Array<unknown>(records.length);
  const duplicates = duplicateFinder(kind, problems);
  await forEachTimeSliced(records, (item: unknown, index) => {
    const found: ShapeProblem[] = [];
    const parsed = shape.parse(item, '', found);
    if (kind === 'datasets' && parsed !== undefined)
      for (const p of datasetItemProblems(parsed as DatasetInput)) found.push(p);
    for (const p of found) problems.add({ index, field: p.path || undefined, message: p.message });
    items[index] = parsed;
  });
  // After every item's own problems, as before: duplicates are listed together with them.
  await forEachTimeSliced(records, duplicates);
  if (problems.count > 0) throw new ValidationFailedError(problems);
  return items;
}

/** Fields that must be unique within one document (contracts: name within the project, later). */
const UNIQUE_FIELDS: Record<ImportKind, string[]> = {
  partners: ['name', 'external_id'],
  cohorts: ['name', 'external_id'],
  projects: ['acronym', 'name', 'external_id'],
  datasets: ['name', 'external_id', 'elu_uuid'],
  contracts: [],
};

/** Runs on the raw items, one at a time, so duplicates are listed with every other problem. */
function duplicateFinder(
  kind: ImportKind,
  problems: CappedProblems,
): (record: unknown, index: number) => void {
  const seen = new Map<string, number>();
  return (record, index) => {
    if (record === null || typeof record !== 'object') return;
    for (const field of UNIQUE_FIELDS[kind]) {
      const value = (record as Record<string, unknown>)[field];
      if (typeof value !== 'string' || value.trim() === '') continue;
      const key = `${field}\u0000${value.trim().toLowerCase()}`;
      const first = seen.get(key);
      if (first === undefined) seen.set(key, index);
      else problems.add({ index, field, message: `duplicates item ${first} of this document` });
    }
  };
}

/**
 * Which kind a document holds, for the command-line tool: its `$schema` when it names one,
 * else the fields its first item carries.
 */
export function detectKind(document: unknown): ImportKind | undefined {
  if (document === null || typeof document !== 'object') return undefined;
  const { $schema: schema, items, results } = document as Record<string, unknown>;
  if (typeof schema === 'string') {
    if (/dataset/.test(schema)) return 'datasets';
    if (/project/.test(schema)) return 'projects';
    if (/institution|partner/.test(schema)) return 'partners';
  }
  const list = Array.isArray(items) ? items : results;
  const first: unknown = Array.isArray(list) ? list[0] : undefined;
  if (first === null || typeof first !== 'object') return undefined;
  const has = (key: string) => key in first;
  if (has('data_declarations') || has('storages') || has('legal_bases') || has('elu_uuid')) {
    return 'datasets';
  }
  if (has('local_custodians') || has('project_id')) return 'contracts';
  if (has('institutes') || has('has_ethics_approval')) return 'cohorts';
  if (
    has('acronym') &&
    (has('publications') || has('start_date') || has('has_institutional_ethics_approval'))
  ) {
    return 'projects';
  }
  if (has('geo_category') || has('sector_category') || has('country_code') || has('is_clinical')) {
    return 'partners';
  }
  return undefined;
}

export function isImportKind(value: string): value is ImportKind {
  return (IMPORT_KINDS as readonly string[]).includes(value);
}
