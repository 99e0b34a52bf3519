import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { mapTimeSliced } from '../../common/time-sliced';
import {
  DirectoryInspection,
  inspectDelivery,
  PAYLOAD_DIR,
} from '../dataset-directory/dataset-directory';
import { DatasetInspector } from '../dataset-directory/dataset-inspector';
import { JsonFileCache, JsonObject, readJsonObject } from '../dataset-directory/json-file-cache';
import { isSafeSegment } from '../safe-segment';
import { DropzoneSourceConfig } from '../source-config';
import {
  DatasetFilter,
  FindDatasetOptions,
  SourceDataset,
  SourceDatasetLocation,
  SourceSubmission,
  SourceSystem,
} from '../source-system';
import { datasetFromInspection } from '../source-dataset';

/**
 * A directory tree:
 *   <root>/submissions/<ref>/submission.json   {ref, title, status, project, custodians, datasets[]}
 *   <root>/datasets/<dataset_id>/dataset.json  {dataset_id, submission, title, metadata}
 *   <root>/datasets/<dataset_id>/{manifest-*.txt, payload/, .ready}
 * A submission's datasets are the ids its submission.json lists (strings or {dataset_id}).
 * Listings read through caches keyed by file signatures (see DatasetInspector); single
 * lookups (findDataset, getSubmission) always read the files.
 */
export class DropzoneSource implements SourceSystem {
  readonly type = 'dropzone';
  readonly name: string;
  private readonly inspector = new DatasetInspector();
  private readonly documents = new JsonFileCache();

  constructor(private readonly config: DropzoneSourceConfig) {
    this.name = config.name;
  }

  async listSubmissions(): Promise<SourceSubmission[]> {
    const refs = (await this.listDirectory(join(this.config.root, 'submissions'))).filter(
      isSafeSegment,
    );
    const found = await mapTimeSliced(refs, (ref) =>
      this.toSubmission(ref, this.documents.read(this.submissionFile(ref))),
    );
    return found
      .filter((s): s is SourceSubmission => s !== null)
      .sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
  }

  async getSubmission(ref: string): Promise<SourceSubmission | null> {
    if (!isSafeSegment(ref)) return null;
    return this.toSubmission(ref, readJsonObject(this.submissionFile(ref)));
  }

  async listDatasets(
    submissions: SourceSubmission[],
    include?: DatasetFilter,
  ): Promise<SourceDataset[]> {
    const pairs = submissions.flatMap((submission) =>
      submission.datasetIds
        .filter((id) => !include || include(submission, id))
        .map((id) => ({ id, submission })),
    );
    return mapTimeSliced(pairs, ({ id, submission }) => {
      const dir = this.locateDataset(id).directory;
      return this.toDataset(
        id,
        submission,
        this.inspector.inspect(dir),
        this.documents.read(join(dir, 'dataset.json')),
      );
    });
  }

  async findDataset(
    datasetId: string,
    options: FindDatasetOptions = {},
  ): Promise<{ dataset: SourceDataset; submission: SourceSubmission } | null> {
    if (!isSafeSegment(datasetId)) return null;
    const dir = this.locateDataset(datasetId).directory;
    const meta = readJsonObject(join(dir, 'dataset.json'));
    // dataset.json names its submission; fall back to a scan when it is not delivered yet.
    const hinted =
      typeof meta?.submission === 'string' ? await this.getSubmission(meta.submission) : null;
    const submission = hinted?.datasetIds.includes(datasetId)
      ? hinted
      : (await this.listSubmissions()).find((s) => s.datasetIds.includes(datasetId));
    if (!submission) return null;
    const inspection =
      options.payload === false ? inspectDelivery(dir) : this.inspector.refresh(dir);
    const dataset = this.toDataset(datasetId, submission, inspection, meta);
    return { dataset, submission };
  }

  locateDataset(datasetId: string): SourceDatasetLocation {
    const directory = join(this.config.root, 'datasets', datasetId);
    return { directory, payloadRoot: join(directory, PAYLOAD_DIR) };
  }

  private submissionFile(ref: string): string {
    return join(this.config.root, 'submissions', ref, 'submission.json');
  }

  private toSubmission(ref: string, raw: JsonObject | null): SourceSubmission | null {
    // A submission.json that does not describe the folder it sits in is ignored, not guessed at.
    if (!raw || raw.ref !== ref) return null;
    const status = typeof raw.status === 'string' ? raw.status : 'unknown';
    const datasets = Array.isArray(raw.datasets) ? (raw.datasets as unknown[]) : [];
    const datasetIds = datasets
      .map((d: unknown) =>
        typeof d === 'string'
          ? d
          : typeof d === 'object' && d !== null
            ? (d as Record<string, unknown>).dataset_id
            : undefined,
      )
      .filter(isSafeSegment);
    return {
      ref,
      title: typeof raw.title === 'string' ? raw.title : ref,
      status,
      project: typeof raw.project === 'string' ? raw.project : '',
      eligible: this.config.importable_statuses.includes(status),
      datasetIds: [...new Set(datasetIds)],
      raw,
    };
  }

  private toDataset(
    datasetId: string,
    submission: SourceSubmission,
    inspection: DirectoryInspection,
    meta: JsonObject | null,
  ): SourceDataset {
    return datasetFromInspection(datasetId, submission, inspection, {
      title: typeof meta?.title === 'string' ? meta.title : datasetId,
      declaredBytes: null,
      metadata: meta ?? null,
    });
  }

  private async listDirectory(path: string): Promise<string[]> {
    try {
      const entries = await readdir(path, { withFileTypes: true });
      return entries.filter((e) => e.isDirectory()).map((e) => e.name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }
}
