import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { NotFoundError } from '@app/errors';
import { AuditActor, AuditService } from '../audit/audit.service';
import { CohortSummaryRow, toCohortSummary } from '../cohorts/cohort.exporter';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { PartnerRow, toPartnerExport } from '../partners/partner.exporter';
import { writeReturning } from './admin-input';

export type PublishableType = 'partner' | 'cohort';

const TABLE: Record<PublishableType, string> = { partner: 'partners', cohort: 'cohorts' };

/** Publishing and unpublishing partners and cohorts (their stored published flag). */
@Injectable()
export class PublishingService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly audit: AuditService,
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
  ) {}

  /** `ref` is the record id or its accession. Publishing gives it an accession if it has none. */
  async setPublished(type: PublishableType, ref: string, published: boolean, actor: AuditActor) {
    const table = TABLE[type];
    return this.dataSource.transaction(async (m) => {
      const rows = await writeReturning<{ id: number }>(
        m,
        `UPDATE ${table} SET is_published = $2::boolean, updated_at = now(),
           elu_accession = CASE WHEN $2::boolean THEN COALESCE(elu_accession, 'ELU_I_' || nextval('elu_accession_seq'))
                                ELSE elu_accession END
         WHERE id::text = $1 OR elu_accession = $1 RETURNING id`,
        [ref, published],
      );
      if (rows.length === 0) throw new NotFoundError(`No ${type} ${ref}`);
      const id = rows[0].id;
      await this.audit.record(m, {
        actor,
        action: published ? 'publish' : 'unpublish',
        objectType: type,
        objectId: id,
        change: { is_published: published },
      });
      if (type === 'partner') {
        const [row] = await m.query<(PartnerRow & { is_published: boolean })[]>(
          `SELECT id, elu_accession, name, acronym, is_clinical, geo_category::text, sector_category::text,
             address, country_code, metadata, is_published FROM partners WHERE id = $1`,
          [id],
        );
        return { ...toPartnerExport(row, this.settings.source), is_published: row.is_published };
      }
      const [cohort] = await m.query<(CohortSummaryRow & { is_published: boolean })[]>(
        'SELECT id, elu_accession, name, description, url, is_published FROM cohorts WHERE id = $1',
        [id],
      );
      return {
        ...toCohortSummary(cohort, this.settings.source),
        is_published: cohort.is_published,
      };
    });
  }
}
