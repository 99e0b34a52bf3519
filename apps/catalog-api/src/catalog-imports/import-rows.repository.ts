import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/** Drops undefined values: absent fields keep their stored value on update. */
export function definedOnly(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));
}

/** One row to write: `existingId` null inserts it, else updates that row. */
export interface RowWrite {
  existingId: number | null;
  /** Column values; undefined ones are not written (absent fields keep their stored value). */
  values: Record<string, unknown>;
  /** An incoming accession: set on insert, and on update only where the record has none. */
  externalId?: string | null;
}

/** Rows per statement: the rows travel as one JSON parameter, so this bounds its size only. */
const ROWS_PER_STATEMENT = 2000;

interface RowGroup {
  insert: boolean;
  columns: string[];
  /** Indexes into the caller's rows. */
  rows: number[];
}

/**
 * Rows that can share one statement: same operation and same written columns. An existing
 * record named by several rows is updated once per statement, in document order, as one
 * statement per row would have (an UPDATE … FROM applies only one of several matching rows).
 */
function groupRows(rows: RowWrite[], written: Record<string, unknown>[]): RowGroup[] {
  const groups = new Map<string, RowGroup>();
  const updatesOf = new Map<number, number>();
  rows.forEach((row, index) => {
    const insert = row.existingId === null;
    const round = insert ? 0 : (updatesOf.get(row.existingId!) ?? 0);
    if (!insert) updatesOf.set(row.existingId!, round + 1);
    const columns = Object.keys(written[index]);
    const key = `${insert ? 'insert' : `update ${round}`}|${columns.join(',')}`;
    let group = groups.get(key);
    if (group === undefined) {
      group = { insert, columns, rows: [] };
      groups.set(key, group);
    }
    group.rows.push(index);
  });
  // Updates first: a record renamed in this document frees its name for a new one.
  return [...groups.values()].sort((a, b) => Number(a.insert) - Number(b.insert));
}

/** One owner's links in a two-column link table: exactly these `otherIds` afterwards. */
export interface Links {
  ownerId: number;
  otherIds: number[];
}

/**
 * Set-based writes the importers make on any catalog table: a whole document in a few
 * statements instead of one round trip per row. Table and column names are always the
 * importers' constants, never input. All run in the import's transaction.
 */
@Injectable()
export class ImportRowsRepository {
  /**
   * Inserts (with the incoming accession, else the sequence default) or updates many rows of one
   * table in a few statements instead of one round trip per row; returns their ids in order.
   * Each chunk of rows is one JSON parameter that `json_populate_recordset` turns into rows of
   * the table's own type, so every column keeps its type (enums, arrays, dates) without casts.
   */
  async upsert(manager: EntityManager, table: string, rows: RowWrite[]): Promise<number[]> {
    const written = rows.map((row) => {
      const values = definedOnly(row.values);
      if (row.externalId) values.elu_accession = row.externalId;
      return values;
    });
    const ids = rows.map((row) => row.existingId ?? 0);
    for (const group of groupRows(rows, written)) {
      for (let from = 0; from < group.rows.length; from += ROWS_PER_STATEMENT) {
        const chunk = group.rows.slice(from, from + ROWS_PER_STATEMENT);
        const json = JSON.stringify(
          chunk.map((index) => ({ ...written[index], id: rows[index].existingId })),
        );
        const columns = group.columns;
        if (group.insert) {
          // RETURNING yields the rows in the order the SELECT fed them (ORDER BY the position).
          const inserted = await manager.query<{ id: number }[]>(
            `INSERT INTO ${table} (${columns.join(', ')})
           SELECT ${columns.join(', ')}
           FROM json_populate_recordset(NULL::${table}, $1::json) WITH ORDINALITY AS v
           ORDER BY v.ordinality RETURNING id`,
            [json],
          );
          chunk.forEach((index, i) => (ids[index] = inserted[i].id));
        } else {
          const sets = columns.map((c) =>
            c === 'elu_accession' ? `${c} = COALESCE(t.${c}, v.${c})` : `${c} = v.${c}`,
          );
          // The ids again as an array: the planner then reads the rows by primary key instead of
          // guessing the function's row count and scanning the table for every chunk.
          await manager.query(
            `UPDATE ${table} t SET ${[...sets, 'updated_at = now()'].join(', ')}
           FROM json_populate_recordset(NULL::${table}, $1::json) AS v
           WHERE t.id = ANY($2::int[]) AND t.id = v.id`,
            [json, chunk.map((index) => rows[index].existingId)],
          );
        }
      }
    }
    return ids;
  }

  /** `upsert` for rows that are all new; returns their ids in order. */
  insert(
    manager: EntityManager,
    table: string,
    rows: Record<string, unknown>[],
  ): Promise<number[]> {
    return this.upsert(
      manager,
      table,
      rows.map((values) => ({ existingId: null, values })),
    );
  }

  /**
   * Replaces the rows of a two-column link table for each given owner, in two statements
   * whatever their number (the pairs travel as two arrays).
   */
  async replaceLinks(
    manager: EntityManager,
    table: string,
    ownerColumn: string,
    otherColumn: string,
    links: Links[],
  ): Promise<void> {
    if (links.length === 0) return;
    await manager.query(`DELETE FROM ${table} WHERE ${ownerColumn} = ANY($1::int[])`, [
      links.map((l) => l.ownerId),
    ]);
    const pairs = links.flatMap((l) => [...new Set(l.otherIds)].map((other) => [l.ownerId, other]));
    if (pairs.length === 0) return;
    await manager.query(
      `INSERT INTO ${table} (${ownerColumn}, ${otherColumn})
     SELECT * FROM unnest($1::int[], $2::int[]) ON CONFLICT DO NOTHING`,
      [pairs.map((p) => p[0]), pairs.map((p) => p[1])],
    );
  }

  /** The rows whose `column`, as lower-cased text, is one of `loweredValues`. */
  holders(
    manager: EntityManager,
    table: string,
    column: string,
    loweredValues: string[],
  ): Promise<{ id: number; value: string }[]> {
    return manager.query<{ id: number; value: string }[]>(
      `SELECT id, lower(${column}::text) AS value FROM ${table} WHERE lower(${column}::text) = ANY($1::text[])`,
      [loweredValues],
    );
  }
}
