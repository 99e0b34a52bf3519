import { Inject, Injectable } from '@nestjs/common';
import { ConflictError, NotFoundError } from '@app/errors';
import { ImportReply } from '../imports/import-record';
import { ImportRecordsRepository } from '../imports/import-records.repository';
import { ImportJobName, importId } from '../imports/import.queue';
import { ImportProducer } from '../imports/import.producer';
import { isSafeSegment } from '../sources/safe-segment';
import { SourceDataset, SourceSubmission, SourceSystem } from '../sources/source-system';
import { SourcesService } from '../sources/sources.service';
import { StorageIndex } from '../storage/storage-index';
import { datasetPath } from '../storage/storage-layout';
import { STORAGE_SYSTEM } from '../storage/storage.module';
import type { StorageSystem } from '../storage/storage-system';
import { ListBody } from '../submissions/submissions.service';

export interface DatasetView {
  dataset_id: string;
  submission: string;
  title: string;
  file_count: number | null;
  byte_size: number | null;
  ready: boolean;
  imported: boolean;
  path: string | null;
  /** The dataset's accession in the catalog, once this copy is registered there. */
  catalog_accession: string | null;
}

export interface DatasetDiffView extends DatasetView {
  reason: string | null;
  reason_detail: string | null;
}

@Injectable()
export class DatasetsService {
  constructor(
    private readonly sources: SourcesService,
    private readonly requests: ImportProducer,
    @Inject(STORAGE_SYSTEM) private readonly storage: StorageSystem,
    private readonly records: ImportRecordsRepository,
  ) {}

  async list(sourceName: string, submissionRef?: string): Promise<ListBody<DatasetView>> {
    const source = this.sources.get(sourceName);
    const submissions = await this.submissions(source, submissionRef);
    const rows = await this.rows(source, submissions, false);
    const items = rows.map(({ view }) => view);
    return { items, count: items.length };
  }

  /** Datasets of eligible submissions that storage does not hold yet, ready or not (with why). */
  async diff(sourceName: string, submissionRef?: string): Promise<ListBody<DatasetDiffView>> {
    const source = this.sources.get(sourceName);
    const eligible = (await this.submissions(source, submissionRef)).filter((s) => s.eligible);
    const rows = await this.rows(source, eligible, true);
    const items = rows.map(({ view, dataset }) => ({
      ...view,
      reason: dataset.ready ? null : dataset.reason,
      reason_detail: dataset.ready ? null : dataset.reasonDetail,
    }));
    return { items, count: items.length };
  }

  async import(sourceName: string, datasetId: string): Promise<ImportReply> {
    const source = this.sources.get(sourceName);
    // Ready means every manifest path exists; the sizes are the listing's business.
    const found = await this.sources.ask(source.findDataset(datasetId, { payload: 'presence' }));
    if (!found)
      throw new NotFoundError(`Unknown dataset: ${datasetId}`, {
        source: sourceName,
        dataset_id: datasetId,
      });
    const result = await this.requests.requestDataset(source, found.submission, found.dataset);
    switch (result.outcome) {
      case 'already_imported':
        return { status: 200, record: result.record };
      case 'queued':
        return { status: 202, record: result.record };
      case 'in_progress':
        throw new ConflictError(`Dataset ${datasetId} is already being imported`, {
          reason: 'import_in_progress',
          import: result.record,
        });
      case 'not_importable':
        throw new ConflictError(
          `Dataset ${datasetId} is not ready: ${result.reason}${result.detail ? ` (${result.detail})` : ''}`,
          {
            reason: result.reason,
            detail: result.detail,
            ...(result.problems ? { problems: result.problems } : {}),
          },
        );
    }
  }

  private async submissions(
    source: SourceSystem,
    submissionRef?: string,
  ): Promise<SourceSubmission[]> {
    const all = await this.sources.ask(source.listSubmissions());
    if (submissionRef === undefined) return all;
    const one = all.filter((s) => s.ref === submissionRef);
    if (one.length > 0) return one;
    // Left out of the listing: refused (409 saying why) or unknown.
    const found = await this.sources.ask(source.getSubmission(submissionRef));
    if (found) return [found];
    throw new NotFoundError(`Unknown submission: ${submissionRef}`, {
      source: source.name,
      submission: submissionRef,
    });
  }

  /**
   * Storage is listed first (a few directory reads, never one per dataset), so that with
   * `missingOnly` the source does not even look at datasets storage already holds.
   */
  private async rows(
    source: SourceSystem,
    submissions: SourceSubmission[],
    missingOnly: boolean,
  ): Promise<{ view: DatasetView; dataset: SourceDataset }[]> {
    const index = await StorageIndex.build(this.storage, submissions, true);
    const datasets = await this.sources.ask(
      source.listDatasets(
        submissions,
        missingOnly ? (submission, id) => !index.hasDataset(submission, id) : undefined,
      ),
    );
    const byRef = new Map(submissions.map((s) => [s.ref, s]));
    const idOf = (datasetId: string) => importId(source.name, ImportJobName.Dataset, datasetId);
    const accessions = await this.records.catalogAccessions(
      datasets
        .filter((d) => index.hasDataset(byRef.get(d.submissionRef)!, d.datasetId))
        .map((d) => idOf(d.datasetId)),
    );
    return datasets.map((dataset) => {
      const submission = byRef.get(dataset.submissionRef)!;
      const usable = isSafeSegment(submission.project);
      return {
        dataset,
        view: {
          dataset_id: dataset.datasetId,
          submission: dataset.submissionRef,
          title: dataset.title,
          file_count: dataset.fileCount,
          byte_size: dataset.byteSize,
          ready: dataset.ready,
          imported: index.hasDataset(submission, dataset.datasetId),
          path: usable ? datasetPath(submission.project, submission.ref, dataset.datasetId) : null,
          catalog_accession: accessions.get(idOf(dataset.datasetId)) ?? null,
        },
      };
    });
  }
}
