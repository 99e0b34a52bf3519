/** One problem found in a dataset or submission, reported in error.details. */
export interface ImportProblem {
  code: string;
  path?: string;
  message: string;
}

/**
 * Bad input that needs a human (checksum mismatch, manifest disagreement, forbidden files,
 * unsafe names, a target that exists): the import becomes `rejected` and is not retried.
 */
export class ImportRejectedError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: ImportProblem[] = [],
  ) {
    super(message);
    this.name = 'ImportRejectedError';
  }
}

/** A fault that may go away (source changed underneath, unreachable, disk full): retried. */
export class ImportTransientError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: ImportProblem[] = [],
  ) {
    super(message);
    this.name = 'ImportTransientError';
  }
}

/**
 * The worker is stopping (SIGTERM): the attempt stopped copying, what it staged is recorded, and
 * the job goes back to the queue for any worker to resume. Neither a failure nor a retry.
 */
export class ImportStoppedError extends Error {
  constructor(message = 'the worker is stopping: the import is handed over') {
    super(message);
    this.name = 'ImportStoppedError';
  }
}
