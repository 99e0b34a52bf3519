import { Injectable } from '@nestjs/common';
import { AccessesRepository } from '../accesses/accesses.repository';
import { TrackedRecordsRepository } from '../common/tracked-records.repository';
import { ContactsRepository } from '../contacts/contacts.repository';
import { ContractsRepository } from '../contracts/contracts.repository';
import { DatasetsRepository } from '../datasets/datasets.repository';
import { ProjectsRepository } from '../projects/projects.repository';
import { UsersRepository } from '../users/users.repository';
import { ImportRowsRepository } from './import-rows.repository';

/**
 * The repositories the importers write through, handed to them in their `ImportContext` (the
 * importers are plain functions, not providers). Each call passes the import's transaction.
 */
@Injectable()
export class ImportRepositories {
  constructor(
    readonly rows: ImportRowsRepository,
    readonly tracked: TrackedRecordsRepository,
    readonly users: UsersRepository,
    readonly contacts: ContactsRepository,
    readonly datasets: DatasetsRepository,
    readonly accesses: AccessesRepository,
    readonly contracts: ContractsRepository,
    readonly projects: ProjectsRepository,
  ) {}
}
