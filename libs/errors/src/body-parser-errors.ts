import type { AppError } from './app-error';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from './http-errors';

/** Errors raised by body-parser (http-errors objects) carry a `type` naming what went wrong. */
interface BodyParserError {
  type?: unknown;
  limit?: number;
}

/**
 * Our error for a body-parser failure, or undefined for anything else. Used where the parsers
 * are mounted: Nest rewrites body-parser's SyntaxError into a plain 400 that quotes the
 * parser's message (and the input), so the `type` must be read before Nest sees the error.
 */
export function fromBodyParserError(error: unknown): AppError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { type, limit } = error as BodyParserError;
  switch (type) {
    case 'entity.too.large':
      return new PayloadTooLargeError(limit);
    case 'entity.parse.failed':
      return new BadRequestError('Malformed JSON body');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new UnsupportedMediaTypeError();
    case 'request.aborted':
    case 'request.size.invalid':
      return new BadRequestError('Request body incomplete');
    default:
      return undefined;
  }
}
