import { Module } from '@nestjs/common';
import { ReadCacheModule } from './read-cache/read-cache.module';
import { CohortsModule } from './cohorts/cohorts.module';
import { ContractsModule } from './contracts/contracts.module';
import { DatasetsModule } from './datasets/datasets.module';
import { DcatModule } from './dcat/dcat.module';
import { FdpModule } from './fdp/fdp.module';
import { PartnersModule } from './partners/partners.module';
import { PermissionsModule } from './permissions/permissions.module';
import { ProjectsModule } from './projects/projects.module';
import { UsersModule } from './users/users.module';

/** The read side of the catalog contract (§3): one import for app.module. */
@Module({
  imports: [
    ReadCacheModule,
    CohortsModule,
    PartnersModule,
    ProjectsModule,
    DatasetsModule,
    ContractsModule,
    UsersModule,
    PermissionsModule,
    DcatModule,
    FdpModule,
  ],
})
export class CatalogReadModule {}
