import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  accessionFilter,
  exactFilterConditions,
  idFilter,
  textFilter,
  type ExactFilter,
} from '../common/exact-filters.sql';
import { SqlParams } from '../common/sql-params';
import { DatabaseRepository, SnapshotReader } from '../database/database.repository';
import { datasetVisible } from '../visibility/visibility.sql';
import type { Viewer } from '../auth/viewer';
import { exportPageSql, storeStaleExportsSql } from './dataset-exports.sql';
import { duoIri } from './use-condition-codes';

export interface DatasetFilter {
  projectId?: number;
  projectTitle?: string;
  /** Values of DATASET_FILTERS, by parameter name. */
  exact?: Record<string, string | number>;
}

/** The exact filters of `GET /api/datasets` (DAISY's dataset attributes, then record keys). */
export const DATASET_FILTERS: readonly ExactFilter[] = [
  idFilter('d.id'),
  accessionFilter('d.elu_accession'),
  textFilter(['title', 'name'], 'd.title', 255),
  {
    names: ['unique_id', 'elu_uuid'],
    column: 'd.elu_uuid',
    value: { type: 'uuid' },
    description: 'UUID',
  },
];

/** A dataset and the JSON text of its export, stored or rendered by the read. */
interface ExportRow {
  id: number;
  json: string;
  stored: boolean;
}

/** A page of exports in id order, and how many of them had no stored export that was right. */
export interface ExportPage {
  items: string[];
  rendered: number;
}

/** A dataset declaration as an import matches it: by dataset and title. */
export interface DeclarationKeyRow {
  id: number;
  dataset_id: number;
  title: string;
}

/** A legal basis naming a declaration of its dataset by title (trimmed and lower-cased). */
export interface LegalBasisDeclarationLink {
  basis: number;
  dataset: number;
  title: string;
}

/**
 * Datasets and what belongs to them (declarations, use conditions, legal bases, storage
 * locations, transfers), in the caller's transaction (`manager`).
 */
/** A storage copy's size and manifest checksum as the provisioner registered them. */
export interface RegisteredCopyFacts {
  dataset_id: number;
  platform: string;
  location: string | null;
  /** bigint: as text. */
  byte_size: string | null;
  manifest_sha256: string | null;
  drs_uri: string | null;
}

@Injectable()
export class DatasetsRepository {
  constructor(private readonly database: DatabaseRepository) {}

  /**
   * The datasets the viewer may see, narrowed by `filter`, page by page in id order (`pageSize`
   * datasets a page, the last page possibly shorter), each as the JSON text of its export
   * (contract §3) with `source`, in one statement per page: the stored export where it is
   * still right, else rendered by PostgreSQL then (see exportPageSql). Node copies the text into
   * the answer instead of building a graph of objects per dataset. Read the pages in one
   * REPEATABLE READ transaction (`manager`) for one consistent snapshot.
   */
  async *findExportPages(
    manager: EntityManager,
    viewer: Viewer,
    filter: DatasetFilter,
    source: string,
    pageSize: number,
  ): AsyncGenerator<ExportPage> {
    // Compiling this statement's plan (JIT) costs more than it saves: ~50 ms a page, the time
    // of 800 datasets. SET LOCAL ends with the read's transaction.
    await manager.query('SET LOCAL jit = off');
    const pageAfter = (reader: EntityManager, after: number, skip: number) => {
      const params = new SqlParams();
      const conditions = [datasetVisible(viewer, params), `d.id > ${params.add(after)}`];
      if (filter.projectId !== undefined)
        conditions.push(`d.project_id = ${params.add(filter.projectId)}`);
      if (filter.projectTitle !== undefined) {
        conditions.push(`lower(p.title) = lower(${params.add(filter.projectTitle)})`);
      }
      for (const c of exactFilterConditions(DATASET_FILTERS, filter.exact ?? {}, params))
        conditions.push(c);
      const page = `SELECT d.id FROM datasets d LEFT JOIN projects p ON p.id = d.project_id
        WHERE ${conditions.join(' AND ')} ORDER BY d.id
        OFFSET ${params.add(skip)} LIMIT ${params.add(pageSize)}`;
      return reader.query<ExportRow[]>(exportPageSql(page, params, source, viewer), params.values);
    };
    // Pages asked for and not yet handed over, in id order; each page, once read, asks for the
    // one after those: PostgreSQL writes them while the caller copies this one. Writing the
    // JSON is most of the work (about 50 µs of one core a dataset), so from the second page on
    // a second connection on the same snapshot writes every other page, when the pool has one
    // free: two pages ahead at most.
    const ahead: { reader: EntityManager; rows: Promise<ExportRow[]> }[] = [];
    const ask = (reader: EntityManager, after: number) =>
      ahead.push({ reader, rows: pageAfter(reader, after, ahead.length * pageSize) });
    let second: SnapshotReader | undefined;
    let single = true;
    ask(manager, 0);
    try {
      while (ahead.length > 0) {
        const { reader, rows: asked } = ahead.shift()!;
        const rows = (await asked).sort((a, b) => a.id - b.id);
        if (rows.length === pageSize) {
          const last = rows[rows.length - 1].id;
          if (single) {
            // More than one page: the second reader joins before the next page is asked for
            // (its snapshot is exported on this connection, which would otherwise be busy).
            single = false;
            second = await this.database.snapshotReader(manager);
            await second?.manager.query('SET LOCAL jit = off');
            ask(reader, last);
            if (second !== undefined) ask(second.manager, last);
          } else {
            ask(reader, last);
          }
        }
        if (rows.length > 0)
          yield {
            items: rows.map((row) => row.json),
            rendered: rows.reduce((sum, row) => sum + (row.stored ? 0 : 1), 0),
          };
      }
    } finally {
      // A caller that stops early: the queries asked for ahead end before the transactions do.
      for (const page of ahead) await page.rows.catch(() => undefined);
      await second?.release();
    }
  }

  /**
   * Renders and stores the exports of up to `limit` datasets whose stored export is missing or
   * no longer right, in one statement of its own snapshot; returns how many it stored.
   */
  async storeStaleExports(manager: EntityManager, limit: number): Promise<number> {
    await manager.query('SET LOCAL jit = off');
    const params = new SqlParams();
    const [{ stored }] = await manager.query<{ stored: number }[]>(
      storeStaleExportsSql(params, limit),
      params.values,
    );
    return stored;
  }

  /** Forgets the stored exports and change stamps of datasets that are gone. */
  async removeOrphanExports(manager: EntityManager): Promise<void> {
    await manager.query(`DELETE FROM dataset_exports e
      WHERE NOT EXISTS (SELECT 1 FROM datasets d WHERE d.id = e.dataset_id)`);
    await manager.query(`DELETE FROM dataset_export_changes c
      WHERE NOT EXISTS (SELECT 1 FROM datasets d WHERE d.id = c.dataset_id)`);
  }

  /**
   * Ids by accession of the datasets with one of `accessions`; with `lock`, their rows are
   * share-locked for the transaction (none can be deleted or re-keyed under it).
   */
  async idsByAccession(
    manager: EntityManager,
    accessions: string[],
    lock: boolean,
  ): Promise<Map<string, number>> {
    const rows = await manager.query<{ id: number; elu_accession: string }[]>(
      `SELECT id, elu_accession FROM datasets WHERE elu_accession = ANY($1::text[])
       ${lock ? 'FOR KEY SHARE' : ''}`,
      [accessions],
    );
    return new Map(rows.map((row) => [row.elu_accession, row.id]));
  }

  /**
   * The data-use terms of each dataset, as DUO IRIs (sorted, each once), over all its
   * declarations' use conditions; consent codes DUO lacks (IP, Other) are left out. A dataset
   * without use conditions is absent from the map.
   */
  async duoTerms(manager: EntityManager, datasetIds: number[]): Promise<Map<number, string[]>> {
    if (datasetIds.length === 0) return new Map();
    const rows = await manager.query<{ id: number; codes: string[] }[]>(
      `SELECT dd.dataset_id AS id, array_agg(DISTINCT uc.use_class::text) AS codes
       FROM use_conditions uc JOIN data_declarations dd ON dd.id = uc.data_declaration_id
       WHERE dd.dataset_id = ANY($1::int[]) GROUP BY dd.dataset_id`,
      [datasetIds],
    );
    return new Map(
      rows.map((row) => [row.id, row.codes.flatMap((code) => duoIri(code) ?? []).sort()]),
    );
  }

  /** A dataset by accession, else by exact title. */
  /**
   * Sets the dataset's EJP RD Virtual Platform flag (`ref`: its accession, else its exact title);
   * its id and accession, undefined when there is no such dataset.
   */
  async setVpDiscoverable(
    manager: EntityManager,
    ref: string,
    discoverable: boolean,
  ): Promise<{ id: number; accession: string | null } | undefined> {
    const id = await this.idByAccessionOrTitle(manager, ref);
    if (id === undefined) return undefined;
    // A CTE: TypeORM answers a bare UPDATE ... RETURNING with [rows, count].
    const rows = await manager.query<{ id: number; accession: string | null }[]>(
      `WITH changed AS (UPDATE datasets SET vp_discoverable = $2::boolean,
           updated_at = CASE WHEN vp_discoverable = $2::boolean THEN updated_at ELSE now() END
         WHERE id = $1 RETURNING id, elu_accession) SELECT id, elu_accession AS accession FROM changed`,
      [id, discoverable],
    );
    return rows[0];
  }

  async idByAccessionOrTitle(manager: EntityManager, ref: string): Promise<number | undefined> {
    const rows = await manager.query<{ id: number }[]>(
      'SELECT id FROM datasets WHERE elu_accession = $1 OR title = $1 ORDER BY (elu_accession = $1) DESC LIMIT 1',
      [ref],
    );
    return rows[0]?.id;
  }

  /** The declarations of the datasets, keyed as an import matches them. */
  declarationsOf(manager: EntityManager, datasetIds: number[]): Promise<DeclarationKeyRow[]> {
    return manager.query<DeclarationKeyRow[]>(
      'SELECT id, dataset_id, title FROM data_declarations WHERE dataset_id = ANY($1::int[])',
      [datasetIds],
    );
  }

  /** Removes the datasets' declarations other than `keptIds` (with what hangs on them). */
  async deleteDeclarationsExcept(
    manager: EntityManager,
    datasetIds: number[],
    keptIds: number[],
  ): Promise<void> {
    await manager.query(
      'DELETE FROM data_declarations WHERE dataset_id = ANY($1::int[]) AND NOT (id = ANY($2::int[]))',
      [datasetIds, keptIds],
    );
  }

  /** Removes the use conditions of the declarations. */
  async deleteUseConditions(manager: EntityManager, declarationIds: number[]): Promise<void> {
    await manager.query('DELETE FROM use_conditions WHERE data_declaration_id = ANY($1::int[])', [
      declarationIds,
    ]);
  }

  /** Removes the datasets' legal bases (their declaration links go with them). */
  async deleteLegalBases(manager: EntityManager, datasetIds: number[]): Promise<void> {
    await manager.query('DELETE FROM legal_bases WHERE dataset_id = ANY($1::int[])', [datasetIds]);
  }

  /** Links each legal basis to its dataset's declaration of that title (one statement). */
  async linkLegalBases(manager: EntityManager, links: LegalBasisDeclarationLink[]): Promise<void> {
    await manager.query(
      `INSERT INTO legal_basis_data_declarations (legal_basis_id, data_declaration_id)
     SELECT l.basis, d.id
     FROM unnest($1::int[], $2::int[], $3::text[]) AS l(basis, dataset, title)
     JOIN data_declarations d ON d.dataset_id = l.dataset AND lower(d.title) = l.title
     ON CONFLICT DO NOTHING`,
      [links.map((n) => n.basis), links.map((n) => n.dataset), links.map((n) => n.title)],
    );
  }

  /** Removes the datasets' transfers. */
  async deleteTransfers(manager: EntityManager, datasetIds: number[]): Promise<void> {
    await manager.query('DELETE FROM transfers WHERE dataset_id = ANY($1::int[])', [datasetIds]);
  }

  /**
   * Removes the datasets' storage locations (their access links go with them); returns the
   * provisioner-registered size and checksum of those that had one, for the rows that replace them.
   */
  async deleteStorageLocations(
    manager: EntityManager,
    datasetIds: number[],
  ): Promise<RegisteredCopyFacts[]> {
    return manager.query<RegisteredCopyFacts[]>(
      // In a CTE: TypeORM answers a bare DELETE … RETURNING as [rows, count].
      `WITH gone AS (DELETE FROM storage_locations WHERE dataset_id = ANY($1::int[])
         RETURNING dataset_id, platform, location, byte_size, manifest_sha256, drs_uri)
       SELECT * FROM gone
       WHERE byte_size IS NOT NULL OR manifest_sha256 IS NOT NULL OR drs_uri IS NOT NULL`,
      [datasetIds],
    );
  }
}
