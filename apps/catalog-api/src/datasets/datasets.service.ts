import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import type { Viewer } from '../permissions/viewer';
import { DatasetFilter, DatasetsRepository } from './datasets.repository';
import { DATASET_SCHEMA_URL, toDatasetExport } from './dataset.exporter';

@Injectable()
export class DatasetsService {
  constructor(
    private readonly datasets: DatasetsRepository,
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
  ) {}

  async list(manager: EntityManager, viewer: Viewer, filter: DatasetFilter) {
    const graphs = await this.datasets.findGraphs(manager, viewer, filter);
    return {
      $schema: DATASET_SCHEMA_URL,
      items: graphs.map((graph) => toDatasetExport(graph, this.settings.source)),
    };
  }
}
