import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { NotFoundError } from '@app/errors';
import { AuditActor, AuditService } from '../audit/audit.service';
import { toCohortSummary } from '../cohorts/cohort.exporter';
import { CohortsRepository } from '../cohorts/cohorts.repository';
import { PublishableTable, TrackedRecordsRepository } from '../common/tracked-records.repository';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { toPartnerExport } from '../partners/partner.exporter';
import { PartnersRepository } from '../partners/partners.repository';

export type PublishableType = 'partner' | 'cohort';

const TABLE: Record<PublishableType, PublishableTable> = { partner: 'partners', cohort: 'cohorts' };

/** Publishing and unpublishing partners and cohorts (their stored published flag). */
@Injectable()
export class PublishingService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly tracked: TrackedRecordsRepository,
    private readonly partners: PartnersRepository,
    private readonly cohorts: CohortsRepository,
    private readonly audit: AuditService,
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
  ) {}

  /** `ref` is the record id or its accession. Publishing gives it an accession if it has none. */
  async setPublished(type: PublishableType, ref: string, published: boolean, actor: AuditActor) {
    const table = TABLE[type];
    return this.dataSource.transaction(async (m) => {
      const ids = await this.tracked.setPublished(m, table, ref, published);
      if (ids.length === 0) throw new NotFoundError(`No ${type} ${ref}`);
      const id = ids[0];
      await this.audit.record(m, {
        actor,
        action: published ? 'publish' : 'unpublish',
        objectType: type,
        objectId: id,
        change: { is_published: published },
      });
      if (type === 'partner') {
        const row = await this.partners.withPublished(m, id);
        return { ...toPartnerExport(row, this.settings.source), is_published: row.is_published };
      }
      const cohort = await this.cohorts.summaryWithPublished(m, id);
      return {
        ...toCohortSummary(cohort, this.settings.source),
        is_published: cohort.is_published,
      };
    });
  }
}
