import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/** Tables whose records carry an `ELU_I_<n>` accession, sharing one sequence. */
export const TRACKED_TABLES = ['partners', 'cohorts', 'projects', 'datasets'] as const;
export type TrackedTable = (typeof TRACKED_TABLES)[number];

/** The tracked records that have a stored published flag. */
export type PublishableTable = 'partners' | 'cohorts';

/** A tracked record as matched by accession or natural key. */
export interface KeyedRow {
  id: number;
  elu_accession: string | null;
  /** The natural key column's value. */
  key: string;
}

/** A tracked record with its accession and the name columns asked for. */
export interface NamedRow {
  id: number;
  elu_accession: string | null;
  [column: string]: string | number | null;
}

/**
 * What the four tracked tables (TrackedRecord) share: accessions from one sequence, look-ups by
 * accession or name, and, for partners and cohorts, publishing. Table and column names are
 * always the callers' constants, never input. All run in the caller's transaction.
 */
@Injectable()
export class TrackedRecordsRepository {
  /** Records whose accession is in `accessions` or whose key, lower-cased, is in `loweredKeys`. */
  matching(
    manager: EntityManager,
    table: TrackedTable,
    keyColumn: string,
    accessions: string[],
    loweredKeys: string[],
  ): Promise<KeyedRow[]> {
    return manager.query<KeyedRow[]>(
      `SELECT id, elu_accession, ${keyColumn} AS key FROM ${table}
     WHERE elu_accession = ANY($1::text[]) OR lower(${keyColumn}) = ANY($2::text[])`,
      [accessions, loweredKeys],
    );
  }

  /** Which of `accessions` the given tables hold (one statement for all of them). */
  async accessionsIn(
    manager: EntityManager,
    tables: readonly TrackedTable[],
    accessions: string[],
  ): Promise<Set<string>> {
    const rows = await manager.query<{ elu_accession: string }[]>(
      tables
        .map((t) => `SELECT elu_accession FROM ${t} WHERE elu_accession = ANY($1::text[])`)
        .join(' UNION ALL '),
      [accessions],
    );
    return new Set(rows.map((r) => r.elu_accession));
  }

  /** Moves the accession sequence past `ELU_I_<highest>`, never back. */
  async reserveAccessionsUpTo(manager: EntityManager, highest: number): Promise<void> {
    await manager.query(
      `SELECT setval('elu_accession_seq', GREATEST($1::bigint, (SELECT last_value FROM elu_accession_seq)))`,
      [highest],
    );
  }

  /**
   * Records whose accession is one of `accessions` or one of whose `nameColumns`, lower-cased,
   * is one of `loweredNames`; each row has its id, accession and those columns.
   */
  withAccessionOrName(
    manager: EntityManager,
    table: TrackedTable,
    nameColumns: string[],
    accessions: string[],
    loweredNames: string[],
  ): Promise<NamedRow[]> {
    return manager.query<NamedRow[]>(
      `SELECT id, elu_accession, ${nameColumns.join(', ')} FROM ${table}
     WHERE elu_accession = ANY($1::text[])
        OR ${nameColumns.map((c) => `lower(${c}) = ANY($2::text[])`).join(' OR ')}`,
      [accessions, loweredNames],
    );
  }

  /** Which of `ids` exist in the table. */
  async existingIds(
    manager: EntityManager,
    table: TrackedTable,
    ids: number[],
  ): Promise<Set<number>> {
    const rows = await manager.query<{ id: number }[]>(
      `SELECT id FROM ${table} WHERE id = ANY($1::int[])`,
      [ids],
    );
    return new Set(rows.map((r) => r.id));
  }

  /**
   * Sets the published flag of the record whose id or accession is `ref`; publishing gives it
   * an accession if it has none. The ids changed (none: no such record).
   */
  async setPublished(
    manager: EntityManager,
    table: PublishableTable,
    ref: string,
    published: boolean,
  ): Promise<number[]> {
    const rows = await manager.query<{ id: number }[]>(
      `WITH changed AS (UPDATE ${table} SET is_published = $2::boolean, updated_at = now(),
           elu_accession = CASE WHEN $2::boolean THEN COALESCE(elu_accession, 'ELU_I_' || nextval('elu_accession_seq'))
                                ELSE elu_accession END
         WHERE id::text = $1 OR elu_accession = $1 RETURNING id) SELECT id FROM changed`,
      [ref, published],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Publishes (and gives an accession to) the unpublished partners and cohorts the dataset's
   * declarations name; their ids.
   */
  async publishDeclaredBy(
    manager: EntityManager,
    datasetId: number,
  ): Promise<{ partners: number[]; cohorts: number[] }> {
    // CTEs: TypeORM answers a bare UPDATE ... RETURNING with [rows, count].
    const partners = await manager.query<{ id: number }[]>(
      `WITH changed AS (UPDATE partners SET is_published = true, updated_at = now(),
         elu_accession = COALESCE(elu_accession, 'ELU_I_' || nextval('elu_accession_seq'))
       WHERE NOT is_published AND id IN (SELECT partner_id FROM data_declarations WHERE dataset_id = $1)
       RETURNING id) SELECT id FROM changed`,
      [datasetId],
    );
    const cohorts = await manager.query<{ id: number }[]>(
      `WITH changed AS (UPDATE cohorts SET is_published = true, updated_at = now(),
         elu_accession = COALESCE(elu_accession, 'ELU_I_' || nextval('elu_accession_seq'))
       WHERE NOT is_published AND id IN (
         SELECT ddc.cohort_id FROM data_declaration_cohorts ddc
         JOIN data_declarations dd ON dd.id = ddc.data_declaration_id WHERE dd.dataset_id = $1)
       RETURNING id) SELECT id FROM changed`,
      [datasetId],
    );
    return { partners: partners.map((r) => r.id), cohorts: cohorts.map((r) => r.id) };
  }
}
