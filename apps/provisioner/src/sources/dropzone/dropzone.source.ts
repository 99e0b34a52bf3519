import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mapLimit } from '../../common/map-limit';
import { inspectDatasetDirectory, PAYLOAD_DIR } from '../dataset-directory/dataset-directory';
import { isSafeSegment } from '../safe-segment';
import { DropzoneSourceConfig } from '../source-config';
import {
  SourceDataset,
  SourceDatasetLocation,
  SourceSubmission,
  SourceSystem,
} from '../source-system';

const READ_CONCURRENCY = 32;

/**
 * A directory tree:
 *   <root>/submissions/<ref>/submission.json   {ref, title, status, project, custodians, datasets[]}
 *   <root>/datasets/<dataset_id>/dataset.json  {dataset_id, submission, title, metadata}
 *   <root>/datasets/<dataset_id>/{manifest-*.txt, payload/, .ready}
 * A submission's datasets are the ids its submission.json lists (strings or {dataset_id}).
 */
export class DropzoneSource implements SourceSystem {
  readonly type = 'dropzone';
  readonly name: string;

  constructor(private readonly config: DropzoneSourceConfig) {
    this.name = config.name;
  }

  async listSubmissions(): Promise<SourceSubmission[]> {
    const refs = await this.listDirectory(join(this.config.root, 'submissions'));
    const found = await mapLimit(refs.filter(isSafeSegment), READ_CONCURRENCY, (ref) =>
      this.readSubmission(ref),
    );
    return found
      .filter((s): s is SourceSubmission => s !== null)
      .sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
  }

  async getSubmission(ref: string): Promise<SourceSubmission | null> {
    return isSafeSegment(ref) ? this.readSubmission(ref) : null;
  }

  async listDatasets(submissions: SourceSubmission[]): Promise<SourceDataset[]> {
    const pairs = submissions.flatMap((submission) =>
      submission.datasetIds.map((id) => ({ id, submission })),
    );
    return mapLimit(pairs, READ_CONCURRENCY, ({ id, submission }) =>
      this.readDataset(id, submission),
    );
  }

  async findDataset(
    datasetId: string,
  ): Promise<{ dataset: SourceDataset; submission: SourceSubmission } | null> {
    if (!isSafeSegment(datasetId)) return null;
    const meta = await this.readJson(join(this.config.root, 'datasets', datasetId, 'dataset.json'));
    // dataset.json names its submission; fall back to a scan when it is not delivered yet.
    const hinted =
      typeof meta?.submission === 'string' ? await this.getSubmission(meta.submission) : null;
    const submission = hinted?.datasetIds.includes(datasetId)
      ? hinted
      : (await this.listSubmissions()).find((s) => s.datasetIds.includes(datasetId));
    if (!submission) return null;
    return { dataset: await this.readDataset(datasetId, submission), submission };
  }

  locateDataset(datasetId: string): SourceDatasetLocation {
    const directory = join(this.config.root, 'datasets', datasetId);
    return { directory, payloadRoot: join(directory, PAYLOAD_DIR) };
  }

  private async readSubmission(ref: string): Promise<SourceSubmission | null> {
    const raw = await this.readJson(join(this.config.root, 'submissions', ref, 'submission.json'));
    // A submission.json that does not describe the folder it sits in is ignored, not guessed at.
    if (!raw || raw.ref !== ref) return null;
    const status = typeof raw.status === 'string' ? raw.status : 'unknown';
    const datasets = Array.isArray(raw.datasets) ? raw.datasets : [];
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

  private async readDataset(
    datasetId: string,
    submission: SourceSubmission,
  ): Promise<SourceDataset> {
    const dir = this.locateDataset(datasetId).directory;
    const [meta, inspection] = await Promise.all([
      this.readJson(join(dir, 'dataset.json')),
      inspectDatasetDirectory(dir),
    ]);
    const notEligible = !submission.eligible;
    return {
      datasetId,
      submissionRef: submission.ref,
      title: typeof meta?.title === 'string' ? meta.title : datasetId,
      fileCount: inspection.fileCount,
      byteSize: inspection.byteSize,
      ready: inspection.ready && !notEligible,
      reason: notEligible ? 'submission_not_eligible' : inspection.reason,
      reasonDetail: notEligible
        ? `submission status is "${submission.status}"`
        : inspection.reasonDetail,
      metadata: meta ?? null,
    };
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

  private async readJson(path: string): Promise<Record<string, unknown> | null> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if (
        (error as NodeJS.ErrnoException).code === 'ENOENT' ||
        (error as NodeJS.ErrnoException).code === 'ENOTDIR'
      )
        return null;
      throw error;
    }
    try {
      const parsed: unknown = JSON.parse(text);
      return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
        ? (parsed as Record<string, unknown>)
        : null;
    } catch {
      return null;
    }
  }
}
