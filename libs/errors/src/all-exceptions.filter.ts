import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import { AppError } from './app-error';
import { allowedMethodsFor } from './allowed-methods';
import { isDependencyUnavailable } from './dependency-errors';
import { fromBodyParserError } from './body-parser-errors';
import { fromDatabaseConflict, fromDatabaseInputError } from './database-input-errors';
import {
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  UnsupportedMediaTypeError,
} from './http-errors';

/**
 * The one place where any error becomes a response: ours, the framework's (unknown route,
 * body parsing, pipes) and unexpected ones. Everything leaves in the same envelope.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    const error = this.toAppError(exception, req);

    if (res.headersSent) {
      this.logger.warn({ err: exception }, 'error after the response started; closing it');
      res.end();
      return;
    }
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    res.status(error.status).json(this.bodyOf(error, req));
  }

  /** The answer's body: the envelope (a route family's filter may add its protocol's members). */
  protected bodyOf(error: AppError, _req: Request): object {
    return error.toEnvelope();
  }

  private toAppError(exception: unknown, req: Request): AppError {
    if (exception instanceof AppError) return exception;
    if (exception instanceof HttpException) return this.fromHttpException(exception, req);
    const fromParser = fromBodyParserError(exception);
    if (fromParser) return fromParser;
    const conflict = fromDatabaseConflict(exception);
    if (conflict) return conflict;
    const fromDatabase = fromDatabaseInputError(exception);
    if (fromDatabase) {
      // A 400 for the client, but also a validation gap worth closing: keep a trace of it.
      this.logger.warn({ err: exception }, 'client value refused by the database');
      return fromDatabase;
    }
    if (isDependencyUnavailable(exception)) {
      this.logger.warn({ err: exception }, 'dependency unavailable');
      return new ServiceUnavailableError('A backing service is unavailable; retry later');
    }
    return this.internal(exception);
  }

  private fromHttpException(exception: HttpException, req: Request): AppError {
    const status = exception.getStatus();
    // The router's own 404 ("Cannot GET /x"; our code throws NotFoundError instead): either the
    // path is unknown, or it is known under other methods, which the contract answers with 405.
    if (status === 404 && exception.message === `Cannot ${req.method} ${req.originalUrl}`) {
      const allowed = allowedMethodsFor(req);
      return allowed.length > 0 ? new MethodNotAllowedError(allowed) : new NotFoundError();
    }
    if (status === 413) return new PayloadTooLargeError();
    if (status === 415) return new UnsupportedMediaTypeError();
    if (status >= 500) return this.internal(exception);
    const body = exception.getResponse();
    const message =
      typeof body === 'object' && body !== null && 'message' in body
        ? (body as { message: unknown }).message
        : exception.message;
    const description = Array.isArray(message) ? message.join('; ') : String(message);
    return new AppError(status, 'http_' + status, description);
  }

  private internal(exception: unknown): AppError {
    const errorId = randomUUID();
    this.logger.error({ err: exception, error_id: errorId }, 'unhandled error');
    return new AppError(500, 'internal', 'Internal server error', { error_id: errorId });
  }
}
