import { applyDecorators, Post } from '@nestjs/common';
import { ApiOperation, ApiResponse } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiErrorResponses } from '@app/platform';
import { ImportRecord, ImportReply } from './import-record';

/**
 * `POST <source-scoped route>/import`: submissions and datasets are requested the same way
 * (one safe-segment id in the body, declared by the route's body DTO; 202 queued / 200 already
 * imported / 409 refused), so the route and its OpenAPI description are declared once.
 */
export function ImportEndpoint(summary: string): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary }),
    ApiResponse({ status: 202, description: 'Queued: the import record' }),
    ApiResponse({ status: 200, description: 'Already imported: the import record' }),
    ApiErrorResponses(404, 409, 503),
    Post('import'),
  );
}

/** The status depends on the outcome, so it is set on the passthrough response; the body is the record. */
export function sendImportReply(res: Response, reply: ImportReply): ImportRecord {
  res.status(reply.status);
  return reply.record;
}
