import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ConflictError, NotFoundError, ValidationFailedError } from '@app/errors';
import { AuditActor, AuditService } from '../audit/audit.service';
import { formatTimestamp } from '../common/formatting';
import { TrackedRecordsRepository } from '../common/tracked-records.repository';
import { DatasetsRepository } from '../datasets/datasets.repository';
import { EndpointsRepository, type ExposureRecord } from '../endpoints/endpoints.repository';
import { conflictOnDuplicate } from './admin-input';
import type { CreateExposureBody, WithdrawExposureBody } from './admin-catalog.dto';

/** The stored exposure as the admin API shows it: dates as text, deprecation spelled out. */
export interface ExposureView extends Omit<
  ExposureRecord,
  'created_at' | 'deprecated_at' | 'deprecation_reason'
> {
  released_date: string | null;
  deprecated: boolean;
  deprecation_date: string | null;
  deprecation_notes: string | null;
}

const ACTIVE_EXISTS = 'This dataset already has an active exposure on this endpoint';

/**
 * Exposures publish a dataset to an endpoint. Creating one also publishes the partners and
 * cohorts of the dataset's declarations; withdrawing deprecates it and keeps the record.
 */
@Injectable()
export class ExposuresAdminService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly datasets: DatasetsRepository,
    private readonly endpoints: EndpointsRepository,
    private readonly tracked: TrackedRecordsRepository,
    private readonly audit: AuditService,
  ) {}

  async create(input: CreateExposureBody, actor: AuditActor): Promise<ExposureView> {
    return conflictOnDuplicate(
      () =>
        this.dataSource.transaction(async (m) => {
          const datasetId = await this.datasets.idByAccessionOrTitle(m, input.dataset ?? '');
          const endpointId = await this.endpoints.idByName(m, input.endpoint ?? '');
          const problems = [
            ...(datasetId === undefined
              ? [{ field: 'dataset', message: `unknown dataset "${input.dataset}"` }]
              : []),
            ...(endpointId === undefined
              ? [{ field: 'endpoint', message: `unknown endpoint "${input.endpoint}"` }]
              : []),
          ];
          if (problems.length > 0 || datasetId === undefined || endpointId === undefined)
            throw new ValidationFailedError(problems);
          if (await this.endpoints.hasActiveExposure(m, datasetId, endpointId))
            throw new ConflictError(ACTIVE_EXISTS);
          const id = await this.endpoints.insertExposure(m, {
            datasetId,
            endpointId,
            formId: input.form_id ?? 0,
            formName: input.form_name ?? null,
            requestPdfEnabled: input.request_pdf_enabled ?? false,
          });
          // Publishes (and gives an accession to) the partners and cohorts the dataset declares.
          const published = await this.tracked.publishDeclaredBy(m, datasetId);
          await this.audit.record(m, {
            actor,
            action: 'expose',
            objectType: 'exposure',
            objectId: id,
            change: { ...input, published },
          });
          return this.view(m, id);
        }),
      ACTIVE_EXISTS,
    );
  }

  async withdraw(
    id: number,
    input: WithdrawExposureBody,
    actor: AuditActor,
  ): Promise<ExposureView> {
    return this.dataSource.transaction(async (m) => {
      const withdrawnAt = await this.endpoints.lockExposure(m, id);
      if (withdrawnAt === undefined) throw new NotFoundError(`No exposure with id ${id}`);
      if (withdrawnAt !== null) throw new ConflictError('This exposure is already withdrawn');
      await this.endpoints.withdrawExposure(m, id, input.reason ?? '');
      await this.audit.record(m, {
        actor,
        action: 'withdraw',
        objectType: 'exposure',
        objectId: id,
        change: { ...input },
      });
      return this.view(m, id);
    });
  }

  private async view(m: EntityManager, id: number): Promise<ExposureView> {
    const r = await this.endpoints.exposure(m, id);
    return {
      id: r.id,
      dataset: r.dataset,
      endpoint: r.endpoint,
      form_id: r.form_id,
      form_name: r.form_name,
      request_pdf_enabled: r.request_pdf_enabled,
      released_date: formatTimestamp(r.created_at),
      deprecated: r.deprecated_at !== null,
      deprecation_date: formatTimestamp(r.deprecated_at),
      deprecation_notes: r.deprecation_reason,
    };
  }
}
