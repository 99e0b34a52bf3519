import { TRACKED_TABLES, TrackedTable } from '../common/tracked-records.repository';
import type { ImportContext } from './import-context';
import { fold } from './import-context';

export interface MatchCandidate {
  index: number;
  externalId: string | null | undefined;
  /** Natural key value (name, acronym, title). */
  key: string;
}

export interface MatchResult {
  /** Existing record id, or null to create. */
  id: number | null;
  /** The record's current accession when it exists. */
  accession: string | null;
}

/**
 * Finds the existing record of each item: by `external_id` first, else by natural key
 * (case-insensitive). Reports conflicts instead of guessing: a natural-key match holding a
 * different accession, a rename onto another record's key, an accession used by another table.
 */
export async function matchTracked(
  ctx: ImportContext,
  table: TrackedTable,
  keyColumn: string,
  keyField: string,
  label: string,
  candidates: MatchCandidate[],
): Promise<MatchResult[]> {
  const accessions = candidates.flatMap((c) => (c.externalId ? [c.externalId] : []));
  const keys = candidates.map((c) => fold(c.key));
  const rows = await ctx.repos.tracked.matching(ctx.manager, table, keyColumn, accessions, keys);
  const byAccession = new Map(rows.flatMap((r) => (r.elu_accession ? [[r.elu_accession, r]] : [])));
  const byKey = new Map(rows.map((r) => [fold(r.key), r]));
  const elsewhere = await accessionsUsedElsewhere(ctx, table, accessions);

  return candidates.map((c) => {
    const keyRow = byKey.get(fold(c.key));
    const accRow = c.externalId ? byAccession.get(c.externalId) : undefined;
    if (accRow !== undefined) {
      if (keyRow !== undefined && keyRow.id !== accRow.id) {
        ctx.problem(
          c.index,
          keyField,
          `another ${label} (${keyRow.elu_accession ?? `id ${keyRow.id}`}) already has this ${keyField}`,
        );
      }
      return { id: accRow.id, accession: accRow.elu_accession };
    }
    if (keyRow !== undefined) {
      if (c.externalId && keyRow.elu_accession && keyRow.elu_accession !== c.externalId) {
        ctx.problem(
          c.index,
          'external_id',
          `${label} "${c.key}" already exists with external_id ${keyRow.elu_accession}`,
        );
      }
      return { id: keyRow.id, accession: keyRow.elu_accession };
    }
    if (c.externalId && elsewhere.has(c.externalId)) {
      ctx.problem(c.index, 'external_id', `${c.externalId} is already used by another record`);
    }
    return { id: null, accession: null };
  });
}

async function accessionsUsedElsewhere(
  ctx: ImportContext,
  table: TrackedTable,
  accessions: string[],
): Promise<Set<string>> {
  if (accessions.length === 0) return new Set();
  const others = TRACKED_TABLES.filter((t) => t !== table);
  return ctx.repos.tracked.accessionsIn(ctx.manager, others, accessions);
}

/**
 * Kept incoming accessions of our own form push the shared sequence past them, so the
 * sequence never hands the same accession out again.
 */
export async function reserveAccessions(ctx: ImportContext, accessions: string[]): Promise<void> {
  // A loop, not Math.max(...numbers): a document's worth of arguments overflows the stack.
  let highest = -1;
  for (const accession of accessions) {
    const match = /^ELU_I_(\d{1,15})$/.exec(accession);
    if (match) highest = Math.max(highest, Number(match[1]));
  }
  if (highest < 0) return;
  await ctx.repos.tracked.reserveAccessionsUpTo(ctx.manager, highest);
}

/** Reports items of one document that share a natural key or an external id. */
export function reportDuplicates(
  ctx: ImportContext,
  items: { index: number; keys: { field: string; value: string | null | undefined }[] }[],
): void {
  const seen = new Map<string, number>();
  for (const item of items) {
    for (const { field, value } of item.keys) {
      if (value === null || value === undefined) continue;
      const key = `${field}\u0000${fold(value)}`;
      const first = seen.get(key);
      if (first === undefined) seen.set(key, item.index);
      else ctx.problem(item.index, field, `duplicates item ${first} of this document`);
    }
  }
}

/**
 * Reports values of a unique column that another record already holds (a create, or a rename
 * onto someone else's value), so the write never hits the constraint.
 */
export async function reportTaken(
  ctx: ImportContext,
  table: TrackedTable,
  column: string,
  field: string,
  items: { index: number; value: string | null | undefined; ownId: number | null }[],
): Promise<void> {
  const wanted = items.filter((i) => i.value !== null && i.value !== undefined);
  if (wanted.length === 0) return;
  const rows = await ctx.repos.rows.holders(
    ctx.manager,
    table,
    column,
    wanted.map((i) => String(i.value).toLowerCase()),
  );
  const holders = new Map<string, number[]>();
  for (const row of rows) holders.set(row.value, [...(holders.get(row.value) ?? []), row.id]);
  for (const item of wanted) {
    const ids = holders.get(String(item.value).toLowerCase()) ?? [];
    if (ids.some((id) => id !== item.ownId)) {
      ctx.problem(item.index, field, 'is already used by another record');
    }
  }
}

/**
 * Writes the rows of tracked records: each item updates its match or creates a record, and its
 * `external_id` becomes the accession (on update only where the record has none). Ids in order.
 */
export function upsertTracked<T extends { external_id?: string | null }>(
  ctx: ImportContext,
  table: TrackedTable,
  items: T[],
  matches: MatchResult[],
  values: (item: T, index: number) => Record<string, unknown>,
): Promise<number[]> {
  return ctx.repos.rows.upsert(
    ctx.manager,
    table,
    items.map((item, index) => ({
      existingId: matches[index].id,
      values: values(item, index),
      externalId: item.external_id,
    })),
  );
}
