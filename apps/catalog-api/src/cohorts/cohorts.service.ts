import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { groupBy, textOrNull } from '../common/formatting';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { toContactExport } from '../contacts/contact.exporter';
import { toCohortSummary } from './cohort.exporter';
import { CohortsRepository } from './cohorts.repository';

@Injectable()
export class CohortsService {
  constructor(
    private readonly cohorts: CohortsRepository,
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
  ) {}

  /** Published cohorts by name, narrowed by COHORT_FILTERS; three queries whatever their number. */
  async listPublished(manager: EntityManager, exact: Record<string, string | number>) {
    const { cohorts, owners, institutes } = await this.cohorts.findPublished(manager, exact);
    const ownersOf = groupBy(owners, (row) => row.cohort_id);
    const institutesOf = groupBy(institutes, (row) => row.cohort_id);
    const results = cohorts.map((cohort) => ({
      ...toCohortSummary(cohort, this.settings.source),
      contacts: (ownersOf.get(cohort.id) ?? []).map(toContactExport),
      institutes: (institutesOf.get(cohort.id) ?? []).map((row) => row.partner_id),
      has_ethics_approval: cohort.has_ethics_approval,
      ethics_approval_notes: textOrNull(cohort.ethics_approval_notes),
      metadata: cohort.metadata,
    }));
    return { results };
  }
}
