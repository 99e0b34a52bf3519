import type { AppError } from './app-error';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from './http-errors';

/** Errors raised by body-parser (http-errors objects) carry a `type` naming what went wrong. */
interface BodyParserError {
  type?: unknown;
  limit?: number;
  /** zlib's code when a body does not inflate: Z_DATA_ERROR (gzip, deflate), ERR__ERROR_… (br). */
  code?: unknown;
}

/**
 * Our error for a body-parser failure, or undefined for anything else. Used where the parsers
 * are mounted: Nest rewrites body-parser's SyntaxError into a plain 400 that quotes the
 * parser's message (and the input), so the `type` must be read before Nest sees the error.
 */
export function fromBodyParserError(error: unknown): AppError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { type, limit, code } = error as BodyParserError;
  // A body that does not decompress as its Content-Encoding says reaches us as zlib's own
  // error (no `type`): it is the client's mistake, not a server fault.
  if (typeof code === 'string' && /^(Z_|ERR__ERROR_)/.test(code)) {
    return new BadRequestError('Request body does not match its Content-Encoding');
  }
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
