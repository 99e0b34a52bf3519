import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { NotFoundError } from '@app/errors';
import { isSafeSegment } from '../sources/safe-segment';
import { SourceRefusedError } from '../sources/source-system';
import { SourcesService } from '../sources/sources.service';
import { collectionPath, datasetPath } from '../storage/storage-layout';
import { ImportRecord, recordFromJob } from './import-record';
import { LISTED_DETAILS } from './record-bounds';
import { ImportRecordsRepository } from './import-records.repository';
import { findImportJob, importedRecord } from './imported-record';
import { ImportJobName, IMPORTS_QUEUE, parseImportId } from './import.queue';
import { STORAGE_SYSTEM } from '../storage/storage.module';
import type { StorageSystem } from '../storage/storage-system';
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
    private readonly records: ImportRecordsRepository,
    @InjectQueue(IMPORTS_QUEUE) private readonly queue: Queue,
    @Inject(STORAGE_SYSTEM) private readonly storage: StorageSystem,
    private readonly sources: SourcesService,
  ) {}

  async get(id: string): Promise<ImportRecord> {
    const found = await findImportJob(this.queue, id);
    if (found) return recordFromJob(found.job, found.state);
    // No job kept under this id: the thing may still be imported (storage is the truth).
    const parsed = parseImportId(id);
    const source = parsed && this.sources.get(parsed.source);
    // Refused metadata (a linked submission.json...) says nothing of what was imported.
    const unlessRefused = <T>(call: Promise<T>): Promise<T | null> =>
      call.catch((error: unknown) => {
        if (error instanceof SourceRefusedError) return null;
        throw error;
      });
    if (parsed && source) {
      // A project that is no single path segment was never imported: no path is made of it.
      if (parsed.kind === ImportJobName.Submission) {
        const submission = await this.sources.ask(unlessRefused(source.getSubmission(parsed.key)));
        const path =
          submission &&
          isSafeSegment(submission.project) &&
          collectionPath(submission.project, submission.ref);
        if (path && (await this.storage.exists(path)))
          return importedRecord(this.queue, this.storage, id, path);
      } else {
        const found = await this.sources.ask(
          unlessRefused(source.findDataset(parsed.key, { payload: 'none' })),
        );
        const path =
          found &&
          isSafeSegment(found.submission.project) &&
          datasetPath(found.submission.project, found.submission.ref, parsed.key);
        if (path && (await this.storage.exists(path)))
          return importedRecord(this.queue, this.storage, id, path);
      }
    }
    throw new NotFoundError(`Unknown import: ${id}`);
  }

  /** Import records newest first, one page, read from the store a page at a time. */
  async list(query: ListImportsQuery): Promise<ImportPage> {
    const { jobs, count } = await this.records.page(
      { state: query.state, source: query.source },
      (query.page - 1) * query.per_page,
      query.per_page,
    );
    return {
      // A page shows a few problems of each record: GET /imports/<id> has the rest.
      items: jobs.map(({ job, jobState }) => recordFromJob(job, jobState, LISTED_DETAILS)),
      count,
      page: query.page,
      per_page: query.per_page,
    };
  }
}
