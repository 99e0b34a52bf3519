import { Global, Module } from '@nestjs/common';
import { RequestAccessesRepository } from './access-requests/request-accesses.repository';
import { AccessesRepository } from './accesses/accesses.repository';
import { AuditRepository } from './audit/audit.repository';
import { AuditCrateRepository } from './audit-crate/audit-crate.repository';
import { ApiKeyOwnersRepository } from './auth/api-key-owners.repository';
import { CatalogVersionRepository } from './catalog-version/catalog-version.repository';
import { CohortsRepository } from './cohorts/cohorts.repository';
import { TrackedRecordsRepository } from './common/tracked-records.repository';
import { ContactsRepository } from './contacts/contacts.repository';
import { ContractsRepository } from './contracts/contracts.repository';
import { DatasetsRepository } from './datasets/datasets.repository';
import { EndpointsRepository } from './endpoints/endpoints.repository';
import { PeopleRepository } from './people/people.repository';
import { ImportRowsRepository } from './catalog-imports/import-rows.repository';
import { PartnersRepository } from './partners/partners.repository';
import { PermissionGrantsRepository } from './visibility/permission-grants.repository';
import { ProjectsRepository } from './projects/projects.repository';
import { TermsRepository } from './terms/terms.repository';
import { UsersRepository } from './users/users.repository';
import { DatabaseRepository } from './database/database.repository';
import { SessionLocksRepository } from './database/session-locks.repository';

const REPOSITORIES = [
  AccessesRepository,
  ApiKeyOwnersRepository,
  AuditRepository,
  AuditCrateRepository,
  CatalogVersionRepository,
  CohortsRepository,
  ContactsRepository,
  ContractsRepository,
  DatabaseRepository,
  DatasetsRepository,
  EndpointsRepository,
  ImportRowsRepository,
  PartnersRepository,
  PeopleRepository,
  PermissionGrantsRepository,
  ProjectsRepository,
  RequestAccessesRepository,
  SessionLocksRepository,
  TermsRepository,
  TrackedRecordsRepository,
  UsersRepository,
];

/**
 * Every catalog repository, for every module: they hold no state but the DataSource (or the
 * settings, for connections of their own), and the services of one area read and write through
 * those of others (imports write every aggregate), so one global list replaces a web of module
 * imports.
 */
@Global()
@Module({ providers: REPOSITORIES, exports: REPOSITORIES })
export class RepositoriesModule {}
