import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { BooleanParam, ExactFiltersQuery, FieldsParam } from '../common/query-input';
import { PARTNER_FIELDS, type PartnerField } from './partner.exporter';
import { PARTNER_FILTERS } from './partners.repository';

/** The exact filters: they apply to every caller. */
export class PartnersQuery extends ExactFiltersQuery(PARTNER_FILTERS) {}

/** Read only for a caller with a key: without one the contract ignores them, even malformed. */
export class PartnersKeyQuery {
  @BooleanParam('With a key: only published (`true`) or unpublished (`false`); else 400')
  published?: boolean;

  @FieldsParam(PARTNER_FIELDS, 'With a key only.')
  fields?: PartnerField[];
}

/**
 * The query string of a caller with a key, else `{}`: the global pipe validates it as the
 * parameter's DTO (custom decorators are validated too).
 */
export const KeyHolderQuery = createParamDecorator((_data: unknown, ctx: ExecutionContext) => {
  const req = ctx.switchToHttp().getRequest<Request & { principal?: unknown }>();
  return req.principal === undefined ? {} : req.query;
});
