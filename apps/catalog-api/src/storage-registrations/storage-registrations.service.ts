import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ConflictError, NotFoundError } from '@app/errors';
import { AuditActor, AuditService } from '../audit/audit.service';
import type {
  StorageRegistrationBody,
  StorageRegistrationResult,
} from './storage-registration.dto';
import {
  RegisteredDatasetRow,
  StorageRegistrationsRepository,
} from './storage-registrations.repository';

/** Why a registration is refused; the provisioner counts refusals by it. */
export type RegistrationRefusal =
  | 'unknown_dataset'
  | 'unknown_project'
  | 'unknown_partner'
  | 'title_in_other_project'
  | 'accession_in_other_project';

/**
 * Registers one storage copy (and the transfer that brought it) of one dataset, in one
 * transaction, touching nothing else of the record. The dataset is the one with the accession,
 * else the one with the title in the named project, created there (unpublished) when missing;
 * either way it must belong to the named project, the submission's: a depositor names the
 * accession and the project, and may attach copies only within that project.
 */
@Injectable()
export class StorageRegistrationsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly rows: StorageRegistrationsRepository,
    private readonly audit: AuditService,
  ) {}

  register(input: StorageRegistrationBody, actor: AuditActor): Promise<StorageRegistrationResult> {
    return this.dataSource.transaction(async (m) => {
      const { row, created } = await this.dataset(m, input);
      const partnerId = input.transfer && (await this.partnerId(m, input.transfer.partner));
      const storage = await this.rows.upsertStorage(m, {
        datasetId: row.id,
        platform: input.storage.platform,
        location: input.storage.location,
        bytes: input.storage.bytes,
        manifestSha256: input.storage.manifest_sha256,
        drsUri: input.storage.drs_uri,
      });
      const storageCreated = storage === 'created';
      const transferCreated =
        input.transfer !== undefined && partnerId !== undefined
          ? await this.rows.addTransfer(m, {
              datasetId: row.id,
              partnerId,
              details: `source ${input.transfer.source}, submission ${input.transfer.submission}, import ${input.import_id}`,
              date: input.transfer.date,
              importId: input.import_id,
            })
          : false;
      if (created || storage !== 'unchanged' || transferCreated) {
        await this.audit.record(m, {
          actor,
          action: 'register_storage',
          objectType: 'dataset',
          objectId: row.elu_accession,
          change: {
            import_id: input.import_id,
            dataset_created: created,
            storage: storage === 'unchanged' ? undefined : input.storage,
            storage_updated: storage === 'updated' || undefined,
            transfer: transferCreated ? input.transfer : undefined,
          },
        });
      }
      return {
        status: 'Success',
        accession: row.elu_accession,
        dataset_created: created,
        storage_created: storageCreated,
        transfer_created: transferCreated,
      };
    });
  }

  private async dataset(
    m: EntityManager,
    input: StorageRegistrationBody,
  ): Promise<{ row: RegisteredDatasetRow; created: boolean }> {
    const { accession, title, project } = input.dataset;
    const projectId = await this.rows.projectIdByAcronym(m, project);
    if (projectId === undefined) throw refusal(`Unknown project: ${project}`, 'unknown_project');
    if (accession !== undefined) {
      const row = await this.rows.datasetByAccession(m, accession);
      if (row === undefined) throw refusal(`Unknown dataset: ${accession}`, 'unknown_dataset');
      if (row.project_id !== projectId)
        throw new ConflictError(`Dataset ${accession} does not belong to project ${project}`, {
          reason: 'accession_in_other_project' satisfies RegistrationRefusal,
          accession,
        });
      return { row, created: false };
    }
    const found = await this.rows.datasetByTitleOrCreate(m, title, projectId);
    // Titles are unique across the catalog: the same title elsewhere is another dataset.
    if (found.row.project_id !== projectId)
      throw new ConflictError(`A dataset titled "${title}" belongs to another project`, {
        reason: 'title_in_other_project' satisfies RegistrationRefusal,
        accession: found.row.elu_accession,
      });
    return found;
  }

  private async partnerId(m: EntityManager, partner: string): Promise<number> {
    const id = await this.rows.partnerIdByNameOrAcronym(m, partner);
    if (id === undefined) throw refusal(`Unknown partner: ${partner}`, 'unknown_partner');
    return id;
  }
}

function refusal(description: string, reason: RegistrationRefusal): NotFoundError {
  return new NotFoundError(description, { reason });
}
