import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DatasetReading, PAYLOAD_DIR } from '../dataset-directory/dataset-directory';
import {
  JsonDocument,
  JsonObject,
  summarizeDatasetDocument,
} from '../dataset-directory/json-document';
import { ScanCache } from '../dataset-directory/scan-cache';
import { sourceScanner } from '../dataset-directory/source-scanner';
import { isSafeSegment } from '../safe-segment';
import {
  DEFAULT_SOURCE_LIMITS,
  DropzoneSourceConfig,
  type SourceLimits,
} from '../../config/source-config';
import {
  datasetWithSubmission,
  listedDatasets,
  refuseUnlistedSubmission,
  submissionFromDocument,
  SUBMISSION_DOCUMENT,
} from '../submission-documents';
import {
  DatasetFilter,
  FindDatasetOptions,
  SourceDataset,
  SourceDatasetLocation,
  SourceSubmission,
  SourceSystem,
} from '../source-system';

/**
 * Caches per source. Dataset entries hold an inspection and a summary of dataset.json (a few
 * hundred bytes): 100,000 datasets take some 60 MB. Submission entries hold whole documents,
 * whose size depositors choose (up to SOURCE_METADATA_MAX_BYTES each). Both live on the heap of
 * processes whose heap is capped (the API's and the worker's commands): 96 MiB per source at
 * most, within those caps beside what an import or a listing holds. Beyond, the oldest entries
 * go and a listing reads their datasets again.
 */
const DATASET_CACHE = { maxEntries: 1_000_000, maxBytes: 64 * 1024 * 1024 };
const SUBMISSION_CACHE = { maxEntries: 500_000, maxBytes: 32 * 1024 * 1024 };

/**
 * A directory tree:
 *   <root>/submissions/<ref>/submission.json   {ref, title, status, project, custodians, datasets[]}
 *   <root>/datasets/<dataset_id>/dataset.json  {dataset_id, submission, title, metadata}
 *   <root>/datasets/<dataset_id>/{manifest-*.txt, payload/, .ready}
 * A dataset belongs to a submission when both say so: the submission's datasets[] lists its id
 * (a string or {dataset_id}) and its dataset.json names the submission. Files are read on the
 * source-scan thread (SourceScanner); listings through caches keyed by file signatures
 * (ScanCache); single lookups (findDataset, getSubmission) always read the files.
 */
export class DropzoneSource implements SourceSystem {
  readonly type = 'dropzone';
  readonly name: string;
  private readonly scanner = sourceScanner();
  private readonly datasets: ScanCache<DatasetReading>;
  private readonly submissions: ScanCache<JsonDocument>;

  constructor(
    private readonly config: DropzoneSourceConfig,
    private readonly limits: SourceLimits = DEFAULT_SOURCE_LIMITS,
  ) {
    this.name = config.name;
    this.datasets = new ScanCache(
      (items) => this.scanner.datasets(items, { document: 'summary', payload: 'sizes', limits }),
      DATASET_CACHE,
    );
    this.submissions = new ScanCache(
      (items) => this.scanner.documents(items, SUBMISSION_DOCUMENT, limits),
      SUBMISSION_CACHE,
    );
  }

  /**
   * A submission whose directory is a link, whose submission.json is refused or does not
   * describe the folder it sits in is left out: nothing in it can say what it holds
   * (getSubmission tells why).
   */
  async listSubmissions(): Promise<SourceSubmission[]> {
    const refs = (await this.listDirectory(join(this.config.root, 'submissions'))).filter(
      isSafeSegment,
    );
    const documents = await this.submissions.readMany(refs.map((ref) => this.submissionDir(ref)));
    return refs
      .map((ref, i) => this.toSubmission(ref, documents[i].value))
      .filter((s): s is SourceSubmission => s !== null)
      .sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
  }

  async getSubmission(ref: string): Promise<SourceSubmission | null> {
    if (!isSafeSegment(ref)) return null;
    const [answer] = await this.scanner.documents(
      [{ dir: this.submissionDir(ref), known: null }],
      SUBMISSION_DOCUMENT,
      this.limits,
    );
    const { value } = answer!.value;
    refuseUnlistedSubmission(this.name, ref, value, answer!.value.problem, this.limits);
    return this.toSubmission(ref, value);
  }

  async listDatasets(
    submissions: SourceSubmission[],
    include?: DatasetFilter,
  ): Promise<SourceDataset[]> {
    return listedDatasets(submissions, include, (ids) =>
      this.datasets.readMany(ids.map((id) => this.locateDataset(id).directory)),
    );
  }

  /**
   * The submission that owns a dataset is the one its dataset.json names, provided that
   * submission lists it. Otherwise the dataset is reported with a submission that lists it and
   * `metadata_invalid`: a dataset directory never imports into a submission it does not name.
   */
  async findDataset(
    datasetId: string,
    options: FindDatasetOptions = {},
  ): Promise<{ dataset: SourceDataset; submission: SourceSubmission } | null> {
    if (!isSafeSegment(datasetId)) return null;
    const dir = this.locateDataset(datasetId).directory;
    const payload = options.payload ?? 'sizes';
    const [answer] = await this.scanner.datasets([{ dir, known: null }], {
      document: 'full',
      payload,
      limits: this.limits,
    });
    const reading = answer!.value;
    // Only a full reading may answer a listing later (it shows the sizes).
    if (payload === 'sizes') {
      const document = reading.document && summarizeDatasetDocument(reading.document);
      this.datasets.remember(dir, { ...answer!, value: { ...reading, document } });
    }
    return datasetWithSubmission(this, datasetId, reading);
  }

  locateDataset(datasetId: string): SourceDatasetLocation {
    const directory = join(this.config.root, 'datasets', datasetId);
    return { directory, payloadRoot: join(directory, PAYLOAD_DIR) };
  }

  private submissionDir(ref: string): string {
    return join(this.config.root, 'submissions', ref);
  }

  private toSubmission(ref: string, raw: JsonObject | null): SourceSubmission | null {
    return submissionFromDocument(ref, raw, this.config.importable_statuses, this.limits);
  }

  private async listDirectory(path: string): Promise<string[]> {
    try {
      const entries = await readdir(path, { withFileTypes: true });
      // Links are not followed: a submission directory must be a directory.
      return entries.filter((e) => e.isDirectory()).map((e) => e.name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }
}
