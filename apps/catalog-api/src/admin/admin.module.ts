import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { TermsModule } from '../terms/terms.module';
import { AdminAuditController } from './admin-audit.controller';
import { AdminCatalogController } from './admin-catalog.controller';
import { AdminPublishingController } from './admin-publishing.controller';
import { AdminTermsController } from './admin-terms.controller';
import { AdminUsersController } from './admin-users.controller';
import { DatasetsAdminService } from './datasets-admin.service';
import { EndpointsAdminService } from './endpoints-admin.service';
import { ExposuresAdminService } from './exposures-admin.service';
import { GrantsAdminService } from './grants-admin.service';
import { PublishingService } from './publishing.service';
import { UsersAdminService } from './users-admin.service';
import { VocabularyAdminService } from './vocabulary-admin.service';

const services = [
  UsersAdminService,
  EndpointsAdminService,
  ExposuresAdminService,
  DatasetsAdminService,
  GrantsAdminService,
  PublishingService,
  VocabularyAdminService,
];

/** The administration routes of §5 and the services the command-line tool shares with them. */
@Module({
  imports: [AuditModule, TermsModule],
  controllers: [
    AdminUsersController,
    AdminCatalogController,
    AdminPublishingController,
    AdminTermsController,
    AdminAuditController,
  ],
  providers: services,
  exports: services,
})
export class AdminModule {}
