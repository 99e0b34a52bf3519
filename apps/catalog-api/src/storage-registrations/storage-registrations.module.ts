import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { StorageRegistrationsController } from './storage-registrations.controller';
import { StorageRegistrationsRepository } from './storage-registrations.repository';
import { StorageRegistrationsService } from './storage-registrations.service';

/** The narrow write through which the provisioner registers what it imported. */
@Module({
  imports: [AuditModule],
  controllers: [StorageRegistrationsController],
  providers: [StorageRegistrationsService, StorageRegistrationsRepository],
})
export class StorageRegistrationsModule {}
