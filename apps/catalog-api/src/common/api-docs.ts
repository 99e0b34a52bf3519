import { applyDecorators, type Type } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiResponse } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger';
import { ApiErrorResponses, ERROR_ENVELOPE } from '@app/platform';

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
  'registration or global key',
  "global or broker key, or the person's own bearer token",
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

/** A documented body: a DTO class, or a schema where no class can say it (a bare array). */
export type Body = Type<unknown> | SchemaObject;

const content = (body: Body) => (typeof body === 'function' ? { type: body } : { schema: body });

/**
 * A read served by the read cache (@CachedRead): 200 with an ETag, 304 when `If-None-Match` matches,
 * 503 while Postgres is unavailable.
 */
export function ApiCachedRead(doc: OperationDoc, body: Body, ...errors: number[]) {
  return applyDecorators(
    operation(doc),
    ApiResponse({
      status: 200,
      description: 'OK',
      ...content(body),
      headers: {
        ETag: { description: 'Changes whenever this answer would', schema: { type: 'string' } },
        'Cache-Control': { schema: { type: 'string', enum: ['private, no-cache'] } },
      },
    }),
    ApiResponse({ status: 304, description: 'Not modified: `If-None-Match` matched the ETag' }),
    // eslint-disable-next-line no-restricted-syntax -- a route's few documented statuses
    ApiErrorResponses(...errors, 503),
  );
}

export interface CallDoc extends OperationDoc {
  /** The success status and body; a route with two (created or not) gives both. */
  responses: { status: number; description: string; body: Body }[];
  /** A request body the route's @Body() type does not document (text, import documents). */
  body?: Body;
  /** Error statuses beyond the common ones; 503 (Postgres down) is always added. */
  errors?: number[];
}

/** Any other route: its summary, body, success responses and errors. */
export function ApiCall(doc: CallDoc) {
  // The decorators and statuses of one route, a handful each.
  /* eslint-disable no-restricted-syntax */
  return applyDecorators(
    operation(doc),
    ...(doc.body === undefined ? [] : [ApiBody({ required: true, ...content(doc.body) })]),
    ...doc.responses.map(({ body, ...r }) => ApiResponse({ ...r, ...content(body) })),
    ApiErrorResponses(...(doc.errors ?? []), 503),
  );
  /* eslint-enable no-restricted-syntax */
}

/** An error whose meaning on this route differs from the shared description of its status. */
export const ApiError = (status: number, description: string) =>
  ApiResponse({
    status,
    description,
    schema: { $ref: `#/components/schemas/${ERROR_ENVELOPE}` },
  });
