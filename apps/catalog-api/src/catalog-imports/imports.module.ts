import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { CatalogImportController } from './catalog-import.controller';
import { CatalogImportService } from './catalog-import.service';
import { ImportRepositories } from './import-repositories';

/** Catalog imports (§5): the HTTP routes and the service the command-line tool calls. */
@Module({
  imports: [AuditModule],
  controllers: [CatalogImportController],
  providers: [CatalogImportService, ImportRepositories],
  exports: [CatalogImportService],
})
export class ImportsModule {}
