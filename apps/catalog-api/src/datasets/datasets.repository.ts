import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { groupBy } from '../common/formatting';
import {
  accessionFilter,
  exactFilterConditions,
  idFilter,
  textFilter,
  type ExactFilter,
} from '../common/exact-filters.sql';
import { SqlParams } from '../common/sql-params';
import { PersonRow, toPersonExport, USER_PERSON_COLUMNS } from '../contacts/contact.exporter';
import { datasetVisible } from '../permissions/visibility.sql';
import type { Viewer } from '../permissions/viewer';
import type {
  DatasetGraph,
  DatasetRow,
  DeclarationCohortRow,
  DeclarationRow,
  ExposureRow,
  LegalBasisRow,
  StorageRow,
  TransferRow,
  UseConditionRow,
} from './dataset.exporter';

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
@Injectable()
export class DatasetsRepository {
  /**
   * The datasets the viewer may see, narrowed by `filter`, with everything their export needs,
   * page by page in id order (`pageSize` datasets a page, the last page possibly shorter), in a
   * fixed number of queries per page (one per relation, by `= ANY(ids)`), never one per
   * dataset. Read the pages in one transaction (`manager`) for one consistent snapshot.
   */
  async *findGraphPages(
    manager: EntityManager,
    viewer: Viewer,
    filter: DatasetFilter,
    pageSize: number,
  ): AsyncGenerator<DatasetGraph[]> {
    const endpointId = viewer.kind === 'endpoint' ? viewer.endpointId : undefined;
    let after = 0;
    for (;;) {
      const params = new SqlParams();
      const conditions = [datasetVisible(viewer, params), `d.id > ${params.add(after)}`];
      if (filter.projectId !== undefined)
        conditions.push(`d.project_id = ${params.add(filter.projectId)}`);
      if (filter.projectTitle !== undefined) {
        conditions.push(`lower(p.title) = lower(${params.add(filter.projectTitle)})`);
      }
      conditions.push(...exactFilterConditions(DATASET_FILTERS, filter.exact ?? {}, params));
      const datasets = await manager.query<DatasetRow[]>(
        `SELECT d.id, d.elu_accession, d.title, d.description, d.elu_uuid, d.other_external_id,
           p.acronym AS project_acronym, p.elu_accession AS project_accession, d.metadata
         FROM datasets d LEFT JOIN projects p ON p.id = d.project_id
         WHERE ${conditions.join(' AND ')} ORDER BY d.id LIMIT ${params.add(pageSize)}`,
        params.values,
      );
      if (datasets.length > 0) yield await this.loadRelations(manager, datasets, endpointId);
      if (datasets.length < pageSize) return;
      after = datasets[datasets.length - 1].id;
    }
  }

  /** Completes dataset rows into graphs; with an endpoint id, also its exposures. */
  private async loadRelations(
    manager: EntityManager,
    datasets: DatasetRow[],
    endpointId?: number,
  ): Promise<DatasetGraph[]> {
    const ids = [datasets.map((d) => d.id)];
    const declarations = await manager.query<DeclarationRow[]>(
      `SELECT id, dataset_id, title, data_types, data_types_notes, access_category::text,
         access_procedure, subjects_category::text, de_identification::text,
         consent_status::text, has_special_subjects, special_subjects_description,
         embargo_date::text AS embargo_date, storage_end_date::text AS storage_end_date,
         storage_duration_criteria
       FROM data_declarations WHERE dataset_id = ANY($1::int[]) ORDER BY id`,
      ids,
    );
    const cohorts = await manager.query<DeclarationCohortRow[]>(
      `SELECT ddc.data_declaration_id, c.name, c.elu_accession
       FROM data_declaration_cohorts ddc
       JOIN data_declarations dd ON dd.id = ddc.data_declaration_id
       JOIN cohorts c ON c.id = ddc.cohort_id
       WHERE dd.dataset_id = ANY($1::int[]) ORDER BY c.name, c.id`,
      ids,
    );
    const useConditions = await manager.query<UseConditionRow[]>(
      `SELECT uc.data_declaration_id, uc.use_class::text, uc.use_class_note,
         uc.use_condition_note, uc.use_condition_rule::text
       FROM use_conditions uc JOIN data_declarations dd ON dd.id = uc.data_declaration_id
       WHERE dd.dataset_id = ANY($1::int[]) ORDER BY uc.id`,
      ids,
    );
    const legalBases = await manager.query<LegalBasisRow[]>(
      `SELECT lb.dataset_id, lb.legal_basis_codes::text[] AS legal_basis_codes,
         lb.personal_data_codes::text[] AS personal_data_codes, lb.legal_basis_notes,
         ARRAY(SELECT dd.title::text FROM legal_basis_data_declarations x
           JOIN data_declarations dd ON dd.id = x.data_declaration_id
           WHERE x.legal_basis_id = lb.id ORDER BY dd.id) AS declaration_titles
       FROM legal_bases lb WHERE lb.dataset_id = ANY($1::int[]) ORDER BY lb.id`,
      ids,
    );
    const storages = await manager.query<StorageRow[]>(
      `SELECT sl.dataset_id, sl.platform, sl.location,
         ARRAY(SELECT a.access_notes FROM access_storage_locations x
           JOIN accesses a ON a.id = x.access_id
           WHERE x.storage_location_id = sl.id ORDER BY a.id) AS accesses
       FROM storage_locations sl WHERE sl.dataset_id = ANY($1::int[]) ORDER BY sl.id`,
      ids,
    );
    const transfers = await manager.query<TransferRow[]>(
      `SELECT t.dataset_id, pa.name AS partner, t.transfer_details,
         t.transfer_date::text AS transfer_date
       FROM transfers t LEFT JOIN partners pa ON pa.id = t.partner_id
       WHERE t.dataset_id = ANY($1::int[]) ORDER BY t.transfer_date NULLS LAST, t.id`,
      ids,
    );
    const custodians = await manager.query<(PersonRow & { dataset_id: number })[]>(
      `SELECT x.dataset_id, ${USER_PERSON_COLUMNS}
       FROM dataset_local_custodians x JOIN users u ON u.id = x.user_id
       LEFT JOIN partners ua ON ua.id = u.affiliation_id
       WHERE x.dataset_id = ANY($1::int[]) ORDER BY u.last_name, u.first_name, u.id`,
      ids,
    );
    const exposures =
      endpointId === undefined
        ? []
        : await manager.query<ExposureRow[]>(
            // The active exposure if any, else the most recently deprecated one.
            `SELECT DISTINCT ON (e.dataset_id) e.dataset_id, e.form_id, e.deprecated_at,
               e.created_at, e.deprecation_reason, e.request_pdf_enabled
             FROM exposures e WHERE e.endpoint_id = $2 AND e.dataset_id = ANY($1::int[])
             ORDER BY e.dataset_id, e.deprecated_at DESC NULLS FIRST, e.id DESC`,
            [...ids, endpointId],
          );

    const declarationsOf = groupBy(declarations, (r) => r.dataset_id);
    const cohortsOf = groupBy(cohorts, (r) => r.data_declaration_id);
    const conditionsOf = groupBy(useConditions, (r) => r.data_declaration_id);
    const legalBasesOf = groupBy(legalBases, (r) => r.dataset_id);
    const storagesOf = groupBy(storages, (r) => r.dataset_id);
    const transfersOf = groupBy(transfers, (r) => r.dataset_id);
    const custodiansOf = groupBy(custodians, (r) => r.dataset_id);
    const exposureOf = new Map(exposures.map((e) => [e.dataset_id, e]));

    return datasets.map((dataset) => ({
      dataset,
      declarations: (declarationsOf.get(dataset.id) ?? []).map((declaration) => ({
        declaration,
        cohorts: cohortsOf.get(declaration.id) ?? [],
        useConditions: conditionsOf.get(declaration.id) ?? [],
      })),
      legalBases: legalBasesOf.get(dataset.id) ?? [],
      storages: storagesOf.get(dataset.id) ?? [],
      transfers: transfersOf.get(dataset.id) ?? [],
      contacts: (custodiansOf.get(dataset.id) ?? []).map((row) =>
        toPersonExport(row, 'Principal_Investigator'),
      ),
      exposure: exposureOf.get(dataset.id),
    }));
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

  /** A dataset by accession, else by exact title. */
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

  /** Removes the datasets' storage locations (their access links go with them). */
  async deleteStorageLocations(manager: EntityManager, datasetIds: number[]): Promise<void> {
    await manager.query('DELETE FROM storage_locations WHERE dataset_id = ANY($1::int[])', [
      datasetIds,
    ]);
  }
}
