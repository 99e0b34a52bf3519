import { Controller, Get, Query } from '@nestjs/common';
import { RequireKinds } from '@app/auth';
import { ValidationFailedError } from '@app/errors';
import { AuditQuery, AuditService } from '../audit/audit.service';
import { readPositiveInt, readString } from '../common/query-params';
import type { RawQuery } from '../common/query-params';

export const AUDIT_PAGE_SIZE = 100;

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
    const valid = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(
      since,
    );
    const date = new Date(since.length === 10 ? `${since}T00:00:00Z` : since);
    if (!valid || Number.isNaN(date.getTime())) {
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
    const match = /^([a-z][a-z-]{0,63})(?::(.{1,255}))?$/.exec(object);
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

@Controller('api/admin/audit')
@RequireKinds('global')
export class AdminAuditController {
  constructor(private readonly audit: AuditService) {}

  /** Newest first, 100 a page: `{"results": [...], "pagination": {"more": bool}}`. */
  @Get()
  async list(@Query() query: RawQuery) {
    const { results, more } = await this.audit.list(readAuditQuery(query));
    return { results, pagination: { more } };
  }
}
