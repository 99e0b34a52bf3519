import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import type { ResponseObject, SchemaObject } from '@nestjs/swagger';

export const ERROR_ENVELOPE = 'ErrorEnvelope';
const ENVELOPE_REF = { $ref: `#/components/schemas/${ERROR_ENVELOPE}` };

/** The error body every route returns (libs/errors), described once for both documents. */
export const ERROR_ENVELOPE_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['status', 'description', 'more'],
  properties: {
    status: { type: 'string', enum: ['Error'] },
    description: { type: 'string', example: 'Invalid API key' },
    more: {
      type: 'object',
      description:
        'Details; `{}` when there are none. Validation errors list `errors: [{parameter|field, index?, message}]`; ' +
        'a 500 carries `error_id`, also logged with the cause; a 405 lists `allowed` methods.',
      additionalProperties: true,
      properties: {
        errors: {
          type: 'array',
          items: {
            type: 'object',
            required: ['message'],
            properties: {
              parameter: { type: 'string' },
              field: { type: 'string' },
              index: { type: 'integer' },
              message: { type: 'string' },
            },
          },
        },
        error_id: { type: 'string', format: 'uuid' },
        allowed: { type: 'array', items: { type: 'string' } },
      },
    },
  },
  example: { status: 'Error', description: 'Invalid API key', more: {} },
};

/** The standard meaning of each error status, shared by every route that can answer it. */
export const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input: the envelope names every problem; nothing was changed',
  401: 'No API key, or an invalid one (`WWW-Authenticate: ApiKey`)',
  403: 'The key is valid but lacks the right for this operation',
  404: 'Not found',
  405: 'Method not allowed on this path (`Allow` lists the methods)',
  409: 'Conflict with the current state',
  413: 'Request body too large',
  415: 'Request body is not JSON',
  429: 'Too many failed authentications from this address (`Retry-After` says when to retry)',
  500: 'Internal error; `more.error_id` identifies it in the logs',
  501: 'Not served by this deployment: past a configured bound (`more.reason` names it)',
  502: 'An upstream system answered badly',
  503: 'A backing service is unavailable; retry later',
};

/** Reusable response objects under `components.responses`, keyed by status. */
export function errorResponseComponents(): Record<string, ResponseObject> {
  return Object.fromEntries(
    Object.entries(ERROR_DESCRIPTIONS).map(([status, description]) => [
      `Error${status}`,
      { description, content: { 'application/json': { schema: ENVELOPE_REF } } },
    ]),
  );
}

/** Documents error statuses a route answers beyond the common ones (e.g. 404, 409). */
export function ApiErrorResponses(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    // eslint-disable-next-line no-restricted-syntax -- a route's few documented statuses
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: ERROR_DESCRIPTIONS[status] ?? 'Error',
        schema: ENVELOPE_REF,
      }),
    ),
  );
}
