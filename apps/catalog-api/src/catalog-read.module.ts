import { Module } from '@nestjs/common';
import { CatalogVersionModule } from './catalog-version/catalog-version.module';
import { CohortsModule } from './cohorts/cohorts.module';
import { ContractsModule } from './contracts/contracts.module';
import { DatasetsModule } from './datasets/datasets.module';
import { PartnersModule } from './partners/partners.module';
import { PermissionsModule } from './permissions/permissions.module';
import { ProjectsModule } from './projects/projects.module';
import { UsersModule } from './users/users.module';

/** The read side of the catalog contract (§3): one import for app.module. */
@Module({
  imports: [
    CatalogVersionModule,
    CohortsModule,
    PartnersModule,
    ProjectsModule,
    DatasetsModule,
    ContractsModule,
    UsersModule,
    PermissionsModule,
  ],
})
export class CatalogReadModule {}
