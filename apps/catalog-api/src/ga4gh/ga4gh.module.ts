import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { PermissionsModule } from '../permissions/permissions.module';
import { Ga4ghController } from './ga4gh.controller';
import { VisaKeys } from './visa-keys';
import { VisasRepository } from './visas.repository';
import { VisasService } from './visas.service';

/** GA4GH Passport visas from the catalog's access grants, and the keys that verify them. */
@Module({
  imports: [AuditModule, PermissionsModule],
  controllers: [Ga4ghController],
  providers: [VisaKeys, VisasRepository, VisasService],
})
export class Ga4ghModule {}
