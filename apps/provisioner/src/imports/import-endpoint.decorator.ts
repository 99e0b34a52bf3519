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
    ApiResponse({
      status: 202,
      description: 'Queued: the import record; `Location` is where it is followed',
      headers: { Location: { description: '`/imports/<id>`', schema: { type: 'string' } } },
    }),
    ApiResponse({
      status: 200,
      description: 'Already imported: the import record',
      headers: { Location: { description: '`/imports/<id>`', schema: { type: 'string' } } },
    }),
    ApiErrorResponses(404, 409, 503),
    Post('import'),
  );
}

/**
 * The status depends on the outcome, so it is set on the passthrough response; the body is the
 * record, and `Location` names where it is followed (`GET /imports/<id>`, RFC 9110 15.3.3).
 */
export function sendImportReply(res: Response, reply: ImportReply): ImportRecord {
  res.status(reply.status);
  res.setHeader('Location', `/imports/${encodeURIComponent(reply.record.id)}`);
  return reply.record;
}
