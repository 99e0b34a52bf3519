import {
  CALENDAR_DATE_PATTERN,
  PatternParam,
  PositiveIntParam,
  TIMESTAMP_PATTERN,
  parseDateOrTimestamp,
} from '@app/platform';
import type { AuditQuery } from '../audit/audit.service';

export const AUDIT_PAGE_SIZE = 100;

/** A date or a timestamp: the two shared patterns as one, for the OpenAPI document. */
const SINCE = new RegExp(
  `^(?:${CALENDAR_DATE_PATTERN.source.slice(1, -1)}|${TIMESTAMP_PATTERN.source.slice(1, -1)})$`,
);
const OBJECT = /^([a-z][a-z-]{0,63})(?::(.{1,255}))?$/;

/** The audit trail's filters, for the route and the `audit` command alike. */
export class AuditQueryParams {
  @PatternParam(
    {
      description: 'Entries at or after: a date YYYY-MM-DD or an ISO-8601 timestamp with offset',
      pattern: SINCE,
      example: '2026-01-31',
    },
    'must be a date YYYY-MM-DD or an ISO-8601 timestamp with offset',
    parseDateOrTimestamp,
  )
  since?: Date;

  @PatternParam(
    {
      description: 'Entries about an object type, or one object as `type:id`',
      pattern: OBJECT,
      example: 'dataset:12',
    },
    'must be an object type, optionally with :id (e.g. dataset:12)',
  )
  object?: string;

  @PositiveIntParam('From 1')
  page?: number;
}

export function toAuditQuery(given: AuditQueryParams): AuditQuery {
  const query: AuditQuery = { page: given.page ?? 1, pageSize: AUDIT_PAGE_SIZE };
  if (given.since !== undefined) query.since = given.since;
  const object = given.object === undefined ? null : OBJECT.exec(given.object);
  if (object !== null) {
    query.objectType = object[1];
    query.objectId = object[2];
  }
  return query;
}
