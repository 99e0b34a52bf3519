import { Injectable } from '@nestjs/common';
import { ConflictError, NotFoundError } from '@app/errors';
import { ImportReply } from '../imports/import-record';
import { ImportProducer } from '../imports/import.producer';
import { isSafeSegment } from '../sources/safe-segment';
import { SourceSubmission } from '../sources/source-system';
import { SourcesService } from '../sources/sources.service';
import { StorageIndex } from '../storage/storage-index';
import { collectionPath } from '../storage/storage-layout';
import { Inject } from '@nestjs/common';
import { STORAGE_SYSTEM } from '../storage/storage.module';
import type { StorageSystem } from '../storage/storage-system';

export interface SubmissionView {
  ref: string;
  title: string;
  status: string;
  project: string;
  eligible: boolean;
  dataset_count: number;
  imported: boolean;
  collection_path: string | null;
}

export interface ListBody<T> {
  items: T[];
  count: number;
}

@Injectable()
export class SubmissionsService {
  constructor(
    private readonly sources: SourcesService,
    private readonly requests: ImportProducer,
    @Inject(STORAGE_SYSTEM) private readonly storage: StorageSystem,
  ) {}

  async list(sourceName: string): Promise<ListBody<SubmissionView>> {
    const source = this.sources.get(sourceName);
    const submissions = await this.sources.ask(source.listSubmissions());
    const index = await StorageIndex.build(this.storage, submissions, false);
    const items = submissions.map((s) => this.view(s, index));
    return { items, count: items.length };
  }

  /** Eligible submissions whose project collection does not exist yet. */
  async diff(sourceName: string): Promise<ListBody<SubmissionView>> {
    const { items } = await this.list(sourceName);
    const missing = items.filter((s) => s.eligible && !s.imported);
    return { items: missing, count: missing.length };
  }

  async import(sourceName: string, ref: string): Promise<ImportReply> {
    const source = this.sources.get(sourceName);
    const submission = await this.sources.ask(source.getSubmission(ref));
    if (!submission)
      throw new NotFoundError(`Unknown submission: ${ref}`, {
        source: sourceName,
        submission: ref,
      });
    const result = await this.sources.ask(this.requests.requestSubmission(source, submission));
    switch (result.outcome) {
      case 'already_imported':
        return { status: 200, record: result.record };
      case 'queued':
      case 'in_progress':
        return { status: 202, record: result.record };
      case 'not_importable':
        throw new ConflictError(result.detail ?? `Submission ${ref} cannot be imported`, {
          reason: result.reason,
          status: submission.status,
        });
    }
  }

  private view(submission: SourceSubmission, index: StorageIndex): SubmissionView {
    return {
      ref: submission.ref,
      title: submission.title,
      status: submission.status,
      project: submission.project,
      eligible: submission.eligible,
      dataset_count: submission.datasetIds.length,
      imported: index.hasCollection(submission),
      collection_path: isSafeSegment(submission.project)
        ? collectionPath(submission.project, submission.ref)
        : null,
    };
  }
}
