import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { NotFoundError } from '@app/errors';
import { Job, JobType, Queue } from 'bullmq';
import { isSafeSegment } from '../sources/safe-segment';
import { SourcesService } from '../sources/sources.service';
import { collectionPath, datasetPath } from '../storage/storage-layout';
import { ImportRecord, JOB_STATES_BY_RECORD_STATE, recordFromJob } from './import-record';
import { ImportRequestsService } from './import-requests.service';
import {
  ImportJobData,
  ImportJobName,
  ImportJobResult,
  IMPORT_KINDS,
  IMPORTS_QUEUE,
  parseImportId,
} from './imports.queue';
import { ListImportsQuery } from './imports.dto';

export interface ImportPage {
  items: ImportRecord[];
  count: number;
  page: number;
  per_page: number;
}

/** Reading import records: one by id, or all of them newest first. */
@Injectable()
export class ImportsService {
  constructor(
    @InjectQueue(IMPORTS_QUEUE) private readonly queue: Queue,
    private readonly requests: ImportRequestsService,
    private readonly sources: SourcesService,
  ) {}

  async get(id: string): Promise<ImportRecord> {
    const record = await this.requests.record(id);
    if (record) return record;
    // No job kept under this id: the thing may still be imported (storage is the truth).
    const parsed = parseImportId(id);
    const source = parsed && this.sources.get(parsed.source);
    if (parsed && source) {
      // A project that is no single path segment was never imported: no path is made of it.
      if (parsed.kind === ImportJobName.Submission) {
        const submission = await this.sources.ask(source.getSubmission(parsed.key));
        const path =
          submission &&
          isSafeSegment(submission.project) &&
          collectionPath(submission.project, submission.ref);
        if (path && (await this.requestsExists(path)))
          return this.requests.importedRecord(id, path);
      } else {
        const found = await this.sources.ask(source.findDataset(parsed.key));
        const path =
          found &&
          isSafeSegment(found.submission.project) &&
          datasetPath(found.submission.project, found.submission.ref, parsed.key);
        if (path && (await this.requestsExists(path)))
          return this.requests.importedRecord(id, path);
      }
    }
    throw new NotFoundError(`Unknown import: ${id}`);
  }

  /**
   * Every import job, newest first. Jobs are read per state group (so no per-job state lookup)
   * and sorted in memory: fine for the thousands of records a provisioner accumulates.
   */
  async list(query: ListImportsQuery): Promise<ImportPage> {
    const groups = Object.entries(JOB_STATES_BY_RECORD_STATE);
    const wanted = query.state;
    const records: ImportRecord[] = [];
    for (const [group, jobStates] of groups) {
      if (
        wanted &&
        !(group === wanted || (group === 'ended' && (wanted === 'failed' || wanted === 'rejected')))
      )
        continue;
      for (const jobState of jobStates) {
        const jobs = (await this.queue.getJobs([jobState as JobType], 0, -1)) as Job<
          ImportJobData,
          ImportJobResult | undefined
        >[];
        for (const job of jobs) {
          if (!job || !IMPORT_KINDS.includes(job.name as ImportJobName.Dataset)) continue;
          if (query.source && job.data.source !== query.source) continue;
          const record = recordFromJob(job, jobState);
          if (!wanted || record.state === wanted) records.push(record);
        }
      }
    }
    records.sort((a, b) =>
      a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? 1 : -1,
    );
    const start = (query.page - 1) * query.per_page;
    return {
      items: records.slice(start, start + query.per_page),
      count: records.length,
      page: query.page,
      per_page: query.per_page,
    };
  }

  private requestsExists(path: string): Promise<boolean> {
    return this.requests.storageHas(path);
  }
}
