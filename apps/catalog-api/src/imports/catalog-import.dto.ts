import type { Type } from '@nestjs/common';
import { PartialType } from '@nestjs/swagger';
import { CohortRecord } from '../cohorts/cohorts.dto';
import { ListOf } from '../common/response-properties';
import { ContractRecord } from '../contracts/contracts.dto';
import { DatasetRecord } from '../datasets/datasets.dto';
import { PartnerRecord } from '../partners/partners.dto';
import { ProjectRecord } from '../projects/projects.dto';
import type { ImportKind } from './import-shapes';

/**
 * The documented body of an import: `{"items": [...]}` in the export shape, whose keys may be
 * left out (§5 defaults them). Documentation only: the document is checked by its shapes.
 */
function importDocument(kind: ImportKind, record: Type<unknown>): Type<unknown> {
  const Item = PartialType(record);
  class ImportDocument {
    @ListOf(Item, {
      description: 'The export shape; `source`, `id_at_source` and exposure fields are ignored',
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

export const IMPORT_DOCUMENTS: Record<ImportKind, Type<unknown>> = {
  partners: importDocument('partners', PartnerRecord),
  cohorts: importDocument('cohorts', CohortRecord),
  projects: importDocument('projects', ProjectRecord),
  datasets: importDocument('datasets', DatasetRecord),
  contracts: importDocument('contracts', ContractRecord),
};
