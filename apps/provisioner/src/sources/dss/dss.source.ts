import { join } from 'node:path';
import { mapLimit } from '../../common/map-limit';
import {
  DatasetReading,
  DirectoryInspection,
  PAYLOAD_DIR,
} from '../dataset-directory/dataset-directory';
import { ScanCache } from '../dataset-directory/scan-cache';
import { sourceScanner } from '../dataset-directory/source-scanner';
import { isSafeSegment } from '../safe-segment';
import { datasetFromInspection } from '../source-dataset';
import { DEFAULT_SOURCE_LIMITS, DssSourceConfig, type SourceLimits } from '../../config/source-config';
import {
  DatasetFilter,
  FindDatasetOptions,
  SourceDataset,
  SourceDatasetLocation,
  SourceSubmission,
  SourceSystem,
} from '../source-system';
import { DssClient, DssSubmissionSummary } from './dss.client';

const HTTP_CONCURRENCY = 8;
/** Landing-zone inspections (no documents): a few hundred bytes each. */
const DATASET_CACHE = { maxEntries: 1_000_000, maxBytes: 64 * 1024 * 1024 };

interface DssRaw {
  id: number;
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
  private readonly scanner = sourceScanner();
  private readonly datasets: ScanCache<DatasetReading>;

  constructor(
    private readonly config: DssSourceConfig,
    private readonly limits: SourceLimits = DEFAULT_SOURCE_LIMITS,
  ) {
    this.name = config.name;
    this.client = new DssClient(config.name, config.url, config.api_key, config.timeout_ms);
    this.datasets = new ScanCache(
      (items) => this.scanner.datasets(items, { document: 'none', payload: 'sizes', limits }),
      DATASET_CACHE,
    );
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

  async listDatasets(
    submissions: SourceSubmission[],
    include?: DatasetFilter,
  ): Promise<SourceDataset[]> {
    const pairs = submissions.flatMap((submission) =>
      (submission.raw as DssRaw).datasets.map((record) => ({ record, submission })),
    );
    const valid = pairs.filter(
      ({ record, submission }) =>
        isSafeSegment(record.dataset_id) && (!include || include(submission, record.dataset_id)),
    );
    const readings = await this.datasets.readMany(
      valid.map(({ record }) => this.directoryOf(record)),
    );
    return valid.map(({ record, submission }, i) =>
      this.toDataset(record, submission, readings[i].inspection),
    );
  }

  async findDataset(
    datasetId: string,
    options: FindDatasetOptions = {},
  ): Promise<{ dataset: SourceDataset; submission: SourceSubmission } | null> {
    if (!isSafeSegment(datasetId)) return null;
    for (const submission of await this.listSubmissions()) {
      const record = (submission.raw as DssRaw).datasets.find((d) => d.dataset_id === datasetId);
      if (record) {
        const dir = this.directoryOf(record);
        const payload = options.payload ?? 'sizes';
        const [answer] = await this.scanner.datasets([{ dir, known: null }], {
          document: 'none',
          payload,
          limits: this.limits,
        });
        // Only a full reading may answer a listing later (it shows the sizes).
        if (payload === 'sizes') this.datasets.remember(dir, answer!);
        return {
          dataset: this.toDataset(record, submission, answer!.value.inspection),
          submission,
        };
      }
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
    // Neither service API version sends a submission title: the reference name stands in.
    const title = [merged.title, merged.name].find(isText);
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

  private directoryOf(record: Record<string, unknown>): string {
    return this.locateDataset(record.dataset_id as string).directory;
  }

  private toDataset(
    record: Record<string, unknown>,
    submission: SourceSubmission,
    inspection: DirectoryInspection,
  ): SourceDataset {
    const datasetId = record.dataset_id as string;
    return datasetFromInspection(datasetId, submission, inspection, {
      title: isText(record.title) ? record.title : datasetId,
      declaredBytes: declaredBytes(record.byte_size),
      metadata: record,
    });
  }
}

/**
 * The size a dataset record declares. The submission system stores `byte_size` as text, so it
 * arrives as a string of digits (or null); a number is taken too. Anything else is unknown.
 */
export function declaredBytes(value: unknown): number | null {
  if (typeof value === 'string' && /^\s*\d{1,15}\s*$/.test(value)) return Number(value);
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  return null;
}

const isText = (value: unknown): value is string =>
  typeof value === 'string' && value.trim() !== '';
