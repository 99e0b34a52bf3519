import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable } from '@nestjs/common';
import { Job, Queue } from 'bullmq';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';
import { ImportRecord, recordFromJob } from './import-record';
import { findImportJob, importedRecord } from './imported-record';
import { submissionImportProblem } from './submission-import-problem';
import {
  type SourceProblem,
  SourceDataset,
  SourceSubmission,
  SourceSystem,
} from '../sources/source-system';
import { collectionPath, datasetPath } from '../storage/storage-layout';
import { objectKeyCheck } from '../storage/object-key-check';
import { STORAGE_SYSTEM } from '../storage/storage.module';
import type { StorageSystem } from '../storage/storage-system';
import { ImportRecordsRepository } from './import-records.repository';
import {
  ImportJobData,
  ImportJobName,
  importId,
  importJobId,
  ImportJobPayloads,
  ImportKind,
  importRetryPreset,
  IMPORTS_QUEUE,
} from './import.queue';

export type ImportRequestOutcome =
  | { outcome: 'queued'; record: ImportRecord }
  | { outcome: 'in_progress'; record: ImportRecord }
  | { outcome: 'already_imported'; record: ImportRecord }
  | {
      outcome: 'not_importable';
      reason: string;
      detail: string | null;
      /** Every problem behind the reason, when the source listed them (refused metadata). */
      problems?: SourceProblem[];
    };

const UNFINISHED = ['waiting', 'delayed', 'prioritized', 'waiting-children', 'active'];

/**
 * Turns "import this" into at most one queued job. Storage decides whether something is
 * imported; the deterministic job id makes a second job for the same thing impossible.
 * The only code that adds jobs to the imports queue: used by the HTTP routes and by the
 * scheduled sync (the scheduler's repeatable sync job aside). Reading records is
 * `imported-record.ts`'s, which the import records' routes share.
 */
@Injectable()
export class ImportProducer {
  constructor(
    @InjectQueue(IMPORTS_QUEUE) private readonly queue: Queue,
    @Inject(STORAGE_SYSTEM) private readonly storage: StorageSystem,
    @Inject(PROVISIONER_SETTINGS) private readonly settings: ProvisionerSettings,
    private readonly records: ImportRecordsRepository,
  ) {}

  /** A no-op round trip: proves this process can enqueue and a worker completes. */
  ping(id: string): Promise<Job<ImportJobPayloads[ImportJobName.Ping]>> {
    return this.queue.add(
      ImportJobName.Ping,
      { sentAt: new Date().toISOString() },
      { jobId: importJobId(ImportJobName.Ping, id), removeOnComplete: 100, removeOnFail: 100 },
    );
  }

  async requestSubmission(
    source: SourceSystem,
    submission: SourceSubmission,
  ): Promise<ImportRequestOutcome> {
    const id = importId(source.name, ImportJobName.Submission, submission.ref);
    const problem = submissionImportProblem(submission);
    if (problem)
      return { outcome: 'not_importable', reason: problem.reason, detail: problem.message };
    const path = collectionPath(submission.project, submission.ref);
    // The job first, then storage, as for datasets (below).
    const job = await findImportJob(this.queue, id);
    if (job && UNFINISHED.includes(job.state))
      return { outcome: 'in_progress', record: recordFromJob(job.job, job.state) };
    if (await this.storage.exists(path))
      return {
        outcome: 'already_imported',
        record: await importedRecord(this.queue, this.storage, id, path),
      };
    return this.enqueue(ImportJobName.Submission, id, {
      source: source.name,
      key: submission.ref,
      path,
    });
  }

  /**
   * With `scheduled`, a dataset whose last import was rejected is left alone: rejected input
   * needs a human, who asks again with a POST; a schedule would only repeat the same copy.
   */
  async requestDataset(
    source: SourceSystem,
    submission: SourceSubmission,
    dataset: SourceDataset,
    scheduled = false,
  ): Promise<ImportRequestOutcome> {
    const id = importId(source.name, ImportJobName.Dataset, dataset.datasetId);
    const problem = submissionImportProblem(submission);
    // No storage path can be made of such a project name: refused before anything else.
    if (problem?.reason === 'unsafe_project')
      return { outcome: 'not_importable', reason: problem.reason, detail: problem.message };
    const path = datasetPath(submission.project, submission.ref, dataset.datasetId);
    // The job first, then storage: an import that publishes and completes between the two
    // reads is seen running or imported, never queued a second time.
    const job = await findImportJob(this.queue, id);
    if (job && UNFINISHED.includes(job.state))
      return { outcome: 'in_progress', record: recordFromJob(job.job, job.state) };
    if (problem === null && (await this.storage.exists(path))) {
      return {
        outcome: 'already_imported',
        record: await importedRecord(this.queue, this.storage, id, path),
      };
    }
    if (scheduled && job && recordFromJob(job.job, job.state).state === 'rejected')
      return { outcome: 'not_importable', reason: 'rejected', detail: null };
    if (!dataset.ready)
      return {
        outcome: 'not_importable',
        reason: dataset.reason ?? 'not_ready',
        detail: dataset.reasonDetail,
        ...(dataset.problems.length > 0 ? { problems: dataset.problems } : {}),
      };
    // More files than a worker holds at once: no worker could ever run it.
    const maxFiles = this.settings.IMPORT_MAX_FILES;
    if (dataset.fileCount !== null && dataset.fileCount > maxFiles)
      return {
        outcome: 'not_importable',
        reason: 'too_many_files',
        detail: `the dataset lists ${dataset.fileCount} files, more than one worker holds at once (IMPORT_MAX_FILES: ${maxFiles})`,
      };
    const tooLong = this.keysTooLong(path, dataset);
    if (tooLong.length > 0)
      return {
        outcome: 'not_importable',
        reason: 'key_too_long',
        detail: tooLong.map((p) => `${p.path}: ${p.message}`).join('; '),
        problems: tooLong,
      };
    return this.enqueue(ImportJobName.Dataset, id, {
      source: source.name,
      key: dataset.datasetId,
      path,
    });
  }

  /**
   * The longest files of a dataset whose object keys the store would refuse (S3: over 1,024
   * bytes), as far as the request's reading measured them (its few longest paths); preflight
   * names every one.
   */
  private keysTooLong(path: string, dataset: SourceDataset): SourceProblem[] {
    const check = objectKeyCheck(this.storage, path);
    if (!check) return [];
    return (dataset.longestPaths ?? []).flatMap((file) => {
      const message = check(file);
      return message ? [{ code: 'key_too_long', path: file, message }] : [];
    });
  }

  private async enqueue(
    kind: ImportKind,
    id: string,
    data: ImportJobData,
  ): Promise<ImportRequestOutcome> {
    const existing = await findImportJob(this.queue, id);
    if (existing && UNFINISHED.includes(existing.state))
      return { outcome: 'in_progress', record: recordFromJob(existing.job, existing.state) };
    // A finished job under this id is history: the thing was removed from storage since, or the
    // import failed or was rejected. The id must be free for the new import.
    if (existing) {
      await this.records.removed(id);
      await existing.job.remove().catch(() => undefined);
    }
    await this.queue.add(kind, data, {
      jobId: id,
      ...importRetryPreset(this.settings.IMPORT_MAX_ATTEMPTS),
    });
    await this.records.touched(id);
    // Re-read: when a concurrent request won the race, add() returned its job, not ours.
    const added = await findImportJob(this.queue, id);
    if (!added) throw new Error(`import ${id} vanished right after it was queued`);
    return { outcome: 'queued', record: recordFromJob(added.job, added.state) };
  }
}
