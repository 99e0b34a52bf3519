/** The body every error response carries (spec/catalog-api.md §1). */
export interface ErrorEnvelope {
  status: 'Error';
  description: string;
  more: Record<string, unknown>;
}

/** One problem found while validating input; `parameter` for query/path, `index`/`field` for body items. */
export interface FieldProblem {
  parameter?: string;
  index?: number;
  field?: string;
  message: string;
}

/**
 * An error the client is meant to see. `code` is stable and machine-readable (logs, import
 * records); `description` is the human sentence put in the envelope.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    description: string,
    readonly more: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = new.target.name;
  }

  get description(): string {
    return this.message;
  }

  toEnvelope(): ErrorEnvelope {
    return { status: 'Error', description: this.message, more: this.more };
  }
}
