import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import type { Viewer } from '../auth/viewer';
import { JsonTextPages } from '../read-cache/json-body';
import { DatasetExportsRefresher } from './dataset-exports-refresher';
import { DatasetFilter, DatasetsRepository, ExportPage } from './datasets.repository';
import { DATASET_SCHEMA_URL } from './dataset-schema';

/**
 * Datasets read as JSON text per page: at 50,000 datasets the whole list at once would not fit
 * the catalog's heap. A page of 2,000 is about 4.5 MB of JSON.
 */
const PAGE_SIZE = 2000;

@Injectable()
export class DatasetsService {
  constructor(
    private readonly datasets: DatasetsRepository,
    private readonly refresher: DatasetExportsRefresher,
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
  ) {}

  /**
   * The datasets the viewer may see. `items` is read page by page while the read cache writes
   * the answer, inside the read's transaction (`manager`), so it is consumed there only.
   */
  list(manager: EntityManager, viewer: Viewer, filter: DatasetFilter) {
    return {
      $schema: DATASET_SCHEMA_URL,
      items: new JsonTextPages(
        this.refreshingAfter(
          this.datasets.findExportPages(manager, viewer, filter, this.settings.source, PAGE_SIZE),
        ),
      ),
    };
  }

  /** The pages' items; once they are read, a refresh if the read had to render any export. */
  private async *refreshingAfter(pages: AsyncIterable<ExportPage>): AsyncGenerator<string[]> {
    let rendered = 0;
    for await (const page of pages) {
      rendered += page.rendered;
      yield page.items;
    }
    if (rendered > 0) this.refresher.schedule();
  }
}
