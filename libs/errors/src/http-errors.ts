import { AppError, FieldProblem } from './app-error';
import { CappedProblems, MAX_REPORTED_PROBLEMS } from './capped-problems';

export class BadRequestError extends AppError {
  constructor(description: string, more: Record<string, unknown> = {}) {
    super(400, 'bad_request', description, more);
  }
}

/**
 * 400 with the list of problems in `more.errors`, so a client can fix everything at once: at
 * most `MAX_REPORTED_PROBLEMS` of them, and then `more.error_count` says how many there were.
 */
export class ValidationFailedError extends AppError {
  readonly errors: FieldProblem[];

  constructor(errors: readonly FieldProblem[] | CappedProblems, description?: string) {
    const listed = errors instanceof CappedProblems ? errors.listed : errors;
    const count = errors instanceof CappedProblems ? errors.count : errors.length;
    const shown = listed.slice(0, MAX_REPORTED_PROBLEMS);
    super(
      400,
      'validation_failed',
      description ?? ValidationFailedError.summarise(shown, count),
      count > shown.length ? { errors: shown, error_count: count } : { errors: shown },
    );
    this.errors = shown;
  }

  private static summarise(errors: FieldProblem[], count: number): string {
    if (count !== 1) return `Invalid input: ${count} problems`;
    const [only] = errors;
    const where = only.parameter ?? only.field;
    const at = only.index === undefined ? '' : `item ${only.index}: `;
    return where ? `Invalid ${at}${where}: ${only.message}` : `Invalid input: ${at}${only.message}`;
  }
}

export class UnauthorizedError extends AppError {
  constructor(description = 'API key required', challenge = 'ApiKey') {
    super(401, 'unauthorized', description, {}, { 'WWW-Authenticate': challenge });
  }
}

export class ForbiddenError extends AppError {
  constructor(description = 'Forbidden', more: Record<string, unknown> = {}) {
    super(403, 'forbidden', description, more);
  }
}

export class NotFoundError extends AppError {
  constructor(description = 'Not found', more: Record<string, unknown> = {}) {
    super(404, 'not_found', description, more);
  }
}

export class MethodNotAllowedError extends AppError {
  constructor(allowed: string[]) {
    super(
      405,
      'method_not_allowed',
      'Method not allowed',
      { allowed },
      { Allow: allowed.join(', ') },
    );
  }
}

export class ConflictError extends AppError {
  constructor(description: string, more: Record<string, unknown> = {}) {
    super(409, 'conflict', description, more);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(limitBytes?: number) {
    super(
      413,
      'payload_too_large',
      'Request body too large',
      limitBytes === undefined ? {} : { limit_bytes: limitBytes },
    );
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(expected = 'application/json') {
    super(415, 'unsupported_media_type', `Request body must be ${expected}`, { expected });
  }
}

export class RateLimitedError extends AppError {
  constructor(retryAfterSeconds: number, description = 'Too many requests') {
    super(429, 'rate_limited', description, {}, { 'Retry-After': String(retryAfterSeconds) });
  }
}

export class BadGatewayError extends AppError {
  constructor(description: string, more: Record<string, unknown> = {}) {
    super(502, 'bad_gateway', description, more);
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(description: string, more: Record<string, unknown> = {}) {
    super(503, 'service_unavailable', description, more);
  }
}
