import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiParam, ApiQuery, ApiResponse } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger';
import { ApiErrorResponses, ERROR_ENVELOPE } from '@app/platform';
import { POSITIVE_INT } from './api-schemas';
import { UUID_PATTERN, type ExactFilter, type ExactFilterValue } from './query-params';

/**
 * OpenAPI decorators shared by the catalog's controllers. Security and the errors every route
 * shares (401/403 from the auth metadata, 400/413/415 when there are parameters or a body, 500)
 * are added by `setupOpenApi`; these add what the contract says per route.
 */

/** Who may call a route; every summary ends with one of these in brackets. */
export const CALLERS = [
  'public',
  'public; any valid key sees more',
  'any key',
  'global or user key, or an identity-provider bearer token',
  'global key only',
  'REMS, from an allowed address; no key',
] as const;
export type Caller = (typeof CALLERS)[number];

export interface OperationDoc {
  summary: string;
  caller: Caller;
  description?: string;
}

const operation = (doc: OperationDoc) =>
  ApiOperation({ summary: `${doc.summary} (${doc.caller})`, description: doc.description });

/**
 * A read served by the read cache (@CachedRead): 200 with an ETag, 304 when `If-None-Match` matches,
 * 503 while Postgres is unavailable.
 */
export function ApiCachedRead(doc: OperationDoc, body: SchemaObject, ...errors: number[]) {
  return applyDecorators(
    operation(doc),
    ApiResponse({
      status: 200,
      description: 'OK',
      schema: body,
      headers: {
        ETag: { description: 'Changes whenever this answer would', schema: { type: 'string' } },
        'Cache-Control': { schema: { type: 'string', enum: ['private, no-cache'] } },
      },
    }),
    ApiResponse({ status: 304, description: 'Not modified: `If-None-Match` matched the ETag' }),
    ApiErrorResponses(...errors, 503),
  );
}

export interface CallDoc extends OperationDoc {
  /** The success status and body; a route with two (created or not) gives both. */
  responses: { status: number; description: string; schema: SchemaObject }[];
  /** The JSON request body, when the route takes one. */
  body?: SchemaObject;
  /** Error statuses beyond the common ones; 503 (Postgres down) is always added. */
  errors?: number[];
}

/** Any other route: its summary, body, success responses and errors. */
export function ApiCall(doc: CallDoc) {
  return applyDecorators(
    operation(doc),
    ...(doc.body === undefined ? [] : [ApiBody({ required: true, schema: doc.body })]),
    ...doc.responses.map((r) => ApiResponse(r)),
    ApiErrorResponses(...(doc.errors ?? []), 503),
  );
}

/** An error whose meaning on this route differs from the shared description of its status. */
export const ApiError = (status: number, description: string) =>
  ApiResponse({
    status,
    description,
    schema: { $ref: `#/components/schemas/${ERROR_ENVELOPE}` },
  });

/** A path id: a positive integer (else 400 naming it). */
export const ApiIdParam = (description: string, name = 'id') =>
  ApiParam({ name, description, schema: POSITIVE_INT });

/** `?project_id=`: a positive integer (else 400). */
export const ApiProjectIdQuery = () =>
  ApiQuery({
    name: 'project_id',
    required: false,
    description: "Only the project's records (its database id); else 400",
    schema: POSITIVE_INT,
  });

/** `?fields=a,b`: a comma-separated, non-empty subset of `allowed` (others 400). */
export const ApiFieldsQuery = (allowed: readonly string[], note = '') =>
  ApiQuery({
    name: 'fields',
    required: false,
    description: `Comma-separated keys to keep; any other name is a 400.${note ? ` ${note}` : ''}`,
    style: 'form',
    explode: false,
    schema: { type: 'array', minItems: 1, items: { type: 'string', enum: [...allowed] } },
  });

function exactFilterSchema(value: ExactFilterValue): SchemaObject {
  if (value.type === 'id') return POSITIVE_INT;
  if (value.type === 'uuid')
    return { type: 'string', format: 'uuid', pattern: UUID_PATTERN.source };
  return { type: 'string', minLength: 1, maxLength: value.maxLength };
}

/** The exact filters of a list route (`readExactFilters`): every name of each, else 400. */
export const ApiExactFilterQueries = (filters: readonly ExactFilter[]) =>
  applyDecorators(
    ...filters.flatMap((filter) =>
      filter.names.map((name) =>
        ApiQuery({
          name,
          required: false,
          description:
            `Only the records whose ${filter.description} is exactly this ` +
            `(${filter.names.map((n) => `\`${n}\``).join(' or ')}); an invalid value is a 400`,
          schema: exactFilterSchema(filter.value),
        }),
      ),
    ),
  );
