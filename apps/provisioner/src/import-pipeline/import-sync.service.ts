import { Injectable, Logger } from '@nestjs/common';
import { SourceRegistry } from '../sources/source-registry';
import { SourceSystem } from '../sources/source-system';
import { StorageIndex } from '../storage/storage-index';
import { Inject } from '@nestjs/common';
import { STORAGE_SYSTEM } from '../storage/storage.module';
import type { StorageSystem } from '../storage/storage-system';
import { ImportProducer } from '../imports/import.producer';
import { logSafeMessage } from '@app/errors';

/**
 * The scheduled run: for every source, every eligible submission without a collection, then
 * every ready dataset not in storage, is requested exactly as a POST would. Nothing eligible
 * and missing means nothing is queued. One failing source does not stop the others.
 */
@Injectable()
export class ImportSyncService {
  private readonly logger = new Logger(ImportSyncService.name);

  constructor(
    private readonly registry: SourceRegistry,
    private readonly requests: ImportProducer,
    @Inject(STORAGE_SYSTEM) private readonly storage: StorageSystem,
  ) {}

  async run(): Promise<{ queued: number }> {
    let queued = 0;
    for (const source of this.registry.all()) {
      try {
        queued += await this.syncSource(source);
      } catch (error) {
        this.logger.warn(`sync of source ${source.name} failed: ${logSafeMessage(error)}`);
      }
    }
    return { queued };
  }

  private async syncSource(source: SourceSystem): Promise<number> {
    let queued = 0;
    const eligible = (await source.listSubmissions()).filter((s) => s.eligible);
    const index = await StorageIndex.build(this.storage, eligible, true);
    for (const submission of eligible.filter((s) => !index.hasCollection(s))) {
      if ((await this.requests.requestSubmission(source, submission)).outcome === 'queued')
        queued++;
    }
    const byRef = new Map(eligible.map((s) => [s.ref, s]));
    const missing = await source.listDatasets(eligible, (s, id) => !index.hasDataset(s, id));
    for (const dataset of missing) {
      const submission = byRef.get(dataset.submissionRef)!;
      if (!dataset.ready) continue;
      if (
        (await this.requests.requestDataset(source, submission, dataset, true)).outcome === 'queued'
      )
        queued++;
    }
    return queued;
  }
}
