import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ConflictError, NotFoundError, ValidationFailedError } from '@app/errors';
import { AuditActor, AuditService } from '../audit/audit.service';
import { formatTimestamp } from '../common/formatting';
import { bool, field, integer, record, text } from '../imports/shape';
import { conflictOnDuplicate, parseBody, writeReturning } from './admin-input';

const createExposureShape = record({
  dataset: field(text({ nonEmpty: true, max: 255 }), { required: true }),
  endpoint: field(text({ nonEmpty: true, max: 150 }), { required: true }),
  form_id: field(integer(), { required: true }),
  form_name: field(text({ nullable: true, max: 255 })),
  request_pdf_enabled: field(bool()),
});

const withdrawShape = record({
  reason: field(text({ nonEmpty: true, max: 2000 }), { required: true }),
});

export interface ExposureView {
  id: number;
  dataset: string | null;
  endpoint: string;
  form_id: number;
  form_name: string | null;
  request_pdf_enabled: boolean;
  released_date: string | null;
  deprecated: boolean;
  deprecation_date: string | null;
  deprecation_notes: string | null;
}

interface ExposureRow {
  id: number;
  dataset: string | null;
  endpoint: string;
  form_id: number;
  form_name: string | null;
  request_pdf_enabled: boolean;
  created_at: Date;
  deprecated_at: Date | null;
  deprecation_reason: string | null;
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
    private readonly audit: AuditService,
  ) {}

  async create(body: unknown, actor: AuditActor): Promise<ExposureView> {
    const input = parseBody(createExposureShape, body);
    return conflictOnDuplicate(
      () =>
        this.dataSource.transaction(async (m) => {
          const datasetId = await this.datasetId(m, input.dataset ?? '');
          const endpoints = await m.query<{ id: number }[]>(
            'SELECT id FROM endpoints WHERE name = $1',
            [input.endpoint],
          );
          const problems = [
            ...(datasetId === undefined
              ? [{ field: 'dataset', message: `unknown dataset "${input.dataset}"` }]
              : []),
            ...(endpoints.length === 0
              ? [{ field: 'endpoint', message: `unknown endpoint "${input.endpoint}"` }]
              : []),
          ];
          if (problems.length > 0 || datasetId === undefined)
            throw new ValidationFailedError(problems);
          const active = await m.query<unknown[]>(
            'SELECT 1 FROM exposures WHERE dataset_id = $1 AND endpoint_id = $2 AND deprecated_at IS NULL',
            [datasetId, endpoints[0].id],
          );
          if (active.length > 0) throw new ConflictError(ACTIVE_EXISTS);
          const rows = await m.query<{ id: number }[]>(
            `INSERT INTO exposures (dataset_id, endpoint_id, form_id, form_name, request_pdf_enabled)
             VALUES ($1, $2, $3, $4, $5) RETURNING id`,
            [
              datasetId,
              endpoints[0].id,
              input.form_id,
              input.form_name ?? null,
              input.request_pdf_enabled ?? false,
            ],
          );
          const published = await this.publishDeclarationRecords(m, datasetId);
          const id = rows[0].id;
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

  async withdraw(id: number, body: unknown, actor: AuditActor): Promise<ExposureView> {
    const input = parseBody(withdrawShape, body);
    return this.dataSource.transaction(async (m) => {
      const rows = await m.query<{ deprecated_at: Date | null }[]>(
        'SELECT deprecated_at FROM exposures WHERE id = $1 FOR UPDATE',
        [id],
      );
      if (rows.length === 0) throw new NotFoundError(`No exposure with id ${id}`);
      if (rows[0].deprecated_at !== null)
        throw new ConflictError('This exposure is already withdrawn');
      await m.query(
        'UPDATE exposures SET deprecated_at = now(), deprecation_reason = $2, updated_at = now() WHERE id = $1',
        [id, input.reason],
      );
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

  /** A dataset by accession, else by exact name. */
  private async datasetId(m: EntityManager, ref: string): Promise<number | undefined> {
    const rows = await m.query<{ id: number }[]>(
      'SELECT id FROM datasets WHERE elu_accession = $1 OR title = $1 ORDER BY (elu_accession = $1) DESC LIMIT 1',
      [ref],
    );
    return rows[0]?.id;
  }

  /** Publishes (and gives an accession to) the partners and cohorts the dataset declares. */
  private async publishDeclarationRecords(m: EntityManager, datasetId: number) {
    const partners = await writeReturning<{ id: number }>(
      m,
      `UPDATE partners SET is_published = true, updated_at = now(),
         elu_accession = COALESCE(elu_accession, 'ELU_I_' || nextval('elu_accession_seq'))
       WHERE NOT is_published AND id IN (SELECT partner_id FROM data_declarations WHERE dataset_id = $1)
       RETURNING id`,
      [datasetId],
    );
    const cohorts = await writeReturning<{ id: number }>(
      m,
      `UPDATE cohorts SET is_published = true, updated_at = now(),
         elu_accession = COALESCE(elu_accession, 'ELU_I_' || nextval('elu_accession_seq'))
       WHERE NOT is_published AND id IN (
         SELECT ddc.cohort_id FROM data_declaration_cohorts ddc
         JOIN data_declarations dd ON dd.id = ddc.data_declaration_id WHERE dd.dataset_id = $1)
       RETURNING id`,
      [datasetId],
    );
    return { partners: partners.map((r) => r.id), cohorts: cohorts.map((r) => r.id) };
  }

  private async view(m: EntityManager, id: number): Promise<ExposureView> {
    const rows = await m.query<ExposureRow[]>(
      `SELECT e.id, d.elu_accession AS dataset, en.name AS endpoint, e.form_id, e.form_name,
         e.request_pdf_enabled, e.created_at, e.deprecated_at, e.deprecation_reason
       FROM exposures e JOIN datasets d ON d.id = e.dataset_id JOIN endpoints en ON en.id = e.endpoint_id
       WHERE e.id = $1`,
      [id],
    );
    const r = rows[0];
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
