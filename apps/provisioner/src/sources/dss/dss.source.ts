import { join } from 'node:path';
import { mapLimit } from '../../common/map-limit';
import { inspectDatasetDirectory, PAYLOAD_DIR } from '../dataset-directory/dataset-directory';
import { isSafeSegment } from '../safe-segment';
import { DssSourceConfig } from '../source-config';
import {
  SourceDataset,
  SourceDatasetLocation,
  SourceSubmission,
  SourceSystem,
} from '../source-system';
import { DssClient, DssSubmissionSummary } from './dss.client';

const HTTP_CONCURRENCY = 8;
const INSPECT_CONCURRENCY = 32;

interface DssRaw {
  id: number | string;
  summary: DssSubmissionSummary;
  details: Record<string, unknown> | null;
  datasets: Record<string, unknown>[];
}

/**
 * Metadata from the submission system's service API, bytes from the landing zone
 * `<landing_zone>/<dataset_id>/` (same layout as a drop-zone dataset directory).
 * One HTTP call per submission, none per dataset.
 */
export class DssSource implements SourceSystem {
  readonly type = 'dss';
  readonly name: string;
  private readonly client: DssClient;

  constructor(private readonly config: DssSourceConfig) {
    this.name = config.name;
    this.client = new DssClient(config.name, config.url, config.api_key, config.timeout_ms);
  }

  async listSubmissions(): Promise<SourceSubmission[]> {
    const summaries = await this.client.listSubmissions(this.config.list_statuses);
    const loaded = await mapLimit(
      summaries.filter((s) => isSafeSegment(s.ref_name)),
      HTTP_CONCURRENCY,
      (summary) => this.load(summary),
    );
    return loaded.filter((s): s is SourceSubmission => s !== null);
  }

  async getSubmission(ref: string): Promise<SourceSubmission | null> {
    if (!isSafeSegment(ref)) return null;
    // The service API has no lookup by reference name: find the id in the listing.
    const summaries = await this.client.listSubmissions(this.config.list_statuses);
    const summary = summaries.find((s) => s.ref_name === ref);
    return summary ? this.load(summary) : null;
  }

  async listDatasets(submissions: SourceSubmission[]): Promise<SourceDataset[]> {
    const pairs = submissions.flatMap((submission) =>
      (submission.raw as DssRaw).datasets.map((record) => ({ record, submission })),
    );
    const valid = pairs.filter(({ record }) => isSafeSegment(record.dataset_id));
    return mapLimit(valid, INSPECT_CONCURRENCY, ({ record, submission }) =>
      this.toDataset(record, submission),
    );
  }

  async findDataset(
    datasetId: string,
  ): Promise<{ dataset: SourceDataset; submission: SourceSubmission } | null> {
    if (!isSafeSegment(datasetId)) return null;
    for (const submission of await this.listSubmissions()) {
      const record = (submission.raw as DssRaw).datasets.find((d) => d.dataset_id === datasetId);
      if (record) return { dataset: await this.toDataset(record, submission), submission };
    }
    return null;
  }

  locateDataset(datasetId: string): SourceDatasetLocation {
    const directory = join(this.config.landing_zone, datasetId);
    return { directory, payloadRoot: join(directory, PAYLOAD_DIR) };
  }

  private async load(summary: DssSubmissionSummary): Promise<SourceSubmission | null> {
    const status = summary.status_code ?? summary.status ?? 'unknown';
    const eligible = this.config.importable_statuses.includes(status);
    let details: Record<string, unknown> | null = null;
    let datasets: Record<string, unknown>[] = [];
    // Datasets of submissions at statuses the system does not serve (404/409) are simply none.
    const served = await this.client.getDatasets(summary.id);
    if (served) {
      datasets = served.data;
      details = served.submission ?? null;
    }
    details ??= await this.client.getSubmission(summary.id);
    const merged = { ...summary, ...(details ?? {}) };
    const raw: DssRaw = { id: summary.id, summary, details, datasets };
    const title = [merged.title, merged.name].find((v) => typeof v === 'string');
    return {
      ref: summary.ref_name,
      title: typeof title === 'string' ? title : summary.ref_name,
      status,
      project: typeof merged.local_project_name === 'string' ? merged.local_project_name : '',
      eligible,
      datasetIds: datasets.map((d) => d.dataset_id).filter(isSafeSegment),
      raw,
    };
  }

  private async toDataset(
    record: Record<string, unknown>,
    submission: SourceSubmission,
  ): Promise<SourceDataset> {
    const datasetId = record.dataset_id as string;
    const inspection = await inspectDatasetDirectory(this.locateDataset(datasetId).directory);
    const declaredBytes = typeof record.byte_size === 'number' ? record.byte_size : null;
    return {
      datasetId,
      submissionRef: submission.ref,
      title: typeof record.title === 'string' ? record.title : datasetId,
      fileCount: inspection.fileCount,
      byteSize: inspection.byteSize ?? declaredBytes,
      ready: inspection.ready && submission.eligible,
      reason: submission.eligible ? inspection.reason : 'submission_not_eligible',
      reasonDetail: submission.eligible
        ? inspection.reasonDetail
        : `submission status is "${submission.status}"`,
      metadata: record,
    };
  }
}
