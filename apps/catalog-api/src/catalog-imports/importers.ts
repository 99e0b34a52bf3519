import { importCohorts } from './cohorts.importer';
import { importContracts } from './contracts.importer';
import { importDatasets } from './datasets.importer';
import type { ImportContext } from './import-context';
import type {
  CohortInput,
  ContractInput,
  DatasetInput,
  ImportKind,
  PartnerInput,
  ProjectInput,
} from './import-shapes';
import { importPartners } from './partners.importer';
import { importProjects } from './projects.importer';

type Importer = (ctx: ImportContext, items: unknown[]) => Promise<void>;

/** The importer of each kind; `parseDocument` already checked the items against its shape. */
export const IMPORTERS: Record<ImportKind, Importer> = {
  partners: (ctx, items) => importPartners(ctx, items as PartnerInput[]),
  cohorts: (ctx, items) => importCohorts(ctx, items as CohortInput[]),
  projects: (ctx, items) => importProjects(ctx, items as ProjectInput[]),
  datasets: (ctx, items) => importDatasets(ctx, items as DatasetInput[]),
  contracts: (ctx, items) => importContracts(ctx, items as ContractInput[]),
};
