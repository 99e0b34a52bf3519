import type { Type } from '@nestjs/common';
import { PartialType } from '@nestjs/swagger';
import { CohortRecord } from '../cohorts/cohorts.dto';
import { ListOf } from '../common/response-properties';
import { ContractRecord } from '../contracts/contracts.dto';
import { DatasetRecord } from '../datasets/datasets.dto';
import { PartnerRecord } from '../partners/partners.dto';
import { ProjectRecord } from '../projects/projects.dto';
import type { ImportKind } from './import-shapes';

/** Fields an import reads that no export writes (import-documents.spec.ts lists them too). */
const IMPORT_ONLY: Partial<Record<ImportKind, string>> = {
  datasets: '`storages[].category`, the storage category',
  contracts: "`project`, the project's acronym or accession, in place of `project_id`",
};

/**
 * The documented body of an import: `{"items": [...]}` in the export shape, whose keys may be
 * left out (§5 defaults them). Documentation only: the document is checked by its shapes, and
 * import-documents.spec.ts fails when the two name different fields.
 */
function importDocument(kind: ImportKind, record: Type<unknown>): Type<unknown> {
  const Item = PartialType(record);
  const also = IMPORT_ONLY[kind];
  class ImportDocument {
    @ListOf(Item, {
      description:
        'The export shape; `source`, `id_at_source` and exposure fields are ignored' +
        (also ? `. Also read: ${also}` : ''),
    })
    items!: unknown[];
  }
  // The OpenAPI document names a schema after its class.
  Object.defineProperty(Item, 'name', { value: `${record.name}Input` });
  Object.defineProperty(ImportDocument, 'name', {
    value: `${kind[0].toUpperCase()}${kind.slice(1)}ImportDocument`,
  });
  return ImportDocument;
}

/** The export record each import kind documents its items by (import-documents.spec.ts holds the shapes to them). */
export const IMPORT_RECORDS: Record<ImportKind, Type<unknown>> = {
  partners: PartnerRecord,
  cohorts: CohortRecord,
  projects: ProjectRecord,
  datasets: DatasetRecord,
  contracts: ContractRecord,
};

export const IMPORT_DOCUMENTS = Object.fromEntries(
  Object.entries(IMPORT_RECORDS).map(([kind, record]) => [
    kind,
    importDocument(kind as ImportKind, record),
  ]),
) as Record<ImportKind, Type<unknown>>;
