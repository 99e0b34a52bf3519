import { Controller, Get, Query } from '@nestjs/common';
import { ApiQuery, ApiTags } from '@nestjs/swagger';
import { RequireKinds } from '@app/auth';
import { ValidationFailedError } from '@app/errors';
import { CALENDAR_DATE_PATTERN, parseDateOrTimestamp, TIMESTAMP_PATTERN } from '@app/platform';
import { AuditQuery, AuditService } from '../audit/audit.service';
import { ApiCall } from '../common/api-docs';
import { POSITIVE_INT } from '../common/api-schemas';
import { readPositiveInt, readString } from '../common/query-params';
import { AUDIT_PAGE } from './admin-api-schemas';
import type { RawQuery } from '../common/query-params';

export const AUDIT_PAGE_SIZE = 100;

/** A date or a timestamp: the two shared patterns as one, for the OpenAPI document. */
const SINCE = new RegExp(
  `^(?:${CALENDAR_DATE_PATTERN.source.slice(1, -1)}|${TIMESTAMP_PATTERN.source.slice(1, -1)})$`,
);
const OBJECT = /^([a-z][a-z-]{0,63})(?::(.{1,255}))?$/;

/**
 * Reads `since` (a date or an ISO timestamp with offset), `object` (`type` or `type:id`) and
 * `page` (from 1); 400 naming the parameter otherwise.
 */
export function readAuditQuery(query: RawQuery): AuditQuery {
  const result: AuditQuery = {
    page: readPositiveInt(query, 'page') ?? 1,
    pageSize: AUDIT_PAGE_SIZE,
  };
  const since = readString(query, 'since');
  if (since !== undefined) {
    const date = parseDateOrTimestamp(since);
    if (date === undefined) {
      throw new ValidationFailedError([
        {
          parameter: 'since',
          message: 'must be a date YYYY-MM-DD or an ISO-8601 timestamp with offset',
        },
      ]);
    }
    result.since = date;
  }
  const object = readString(query, 'object');
  if (object !== undefined) {
    const match = OBJECT.exec(object);
    if (match === null) {
      throw new ValidationFailedError([
        {
          parameter: 'object',
          message: 'must be an object type, optionally with :id (e.g. dataset:12)',
        },
      ]);
    }
    result.objectType = match[1];
    result.objectId = match[2];
  }
  return result;
}

@ApiTags('admin')
@Controller('api/admin/audit')
@RequireKinds('global')
export class AdminAuditController {
  constructor(private readonly audit: AuditService) {}

  /** Newest first, 100 a page: `{"results": [...], "pagination": {"more": bool}}`. */
  @ApiCall({
    summary: `The audit trail, newest first, ${AUDIT_PAGE_SIZE} a page`,
    caller: 'global key only',
    responses: [{ status: 200, description: 'One page of entries', schema: AUDIT_PAGE }],
  })
  @ApiQuery({
    name: 'since',
    required: false,
    description: 'Entries at or after: a date YYYY-MM-DD or an ISO-8601 timestamp with offset',
    schema: { type: 'string', pattern: SINCE.source, example: '2026-01-31' },
  })
  @ApiQuery({
    name: 'object',
    required: false,
    description: 'Entries about an object type, or one object as `type:id`',
    schema: { type: 'string', pattern: OBJECT.source, example: 'dataset:12' },
  })
  @ApiQuery({ name: 'page', required: false, description: 'From 1', schema: POSITIVE_INT })
  @Get()
  async list(@Query() query: RawQuery) {
    const { results, more } = await this.audit.list(readAuditQuery(query));
    return { results, pagination: { more } };
  }
}
