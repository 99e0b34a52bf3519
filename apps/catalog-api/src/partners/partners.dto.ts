import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { ApiSchema } from '@nestjs/swagger';
import { BooleanParam, FieldsParam } from '@app/platform';
import { ExactFiltersQuery } from '../common/query-input';
import {
  Accession,
  Bool,
  IdAtSource,
  ListOf,
  Metadata,
  OneOfOrNull,
  Source,
  Text,
  TextOrNull,
} from '../common/response-properties';
import { GEO_CATEGORIES, SECTOR_CATEGORIES } from './partner.entity';
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

const SOME = { required: false } as const;

/** Every key, or with `fields` only those keys: so none is required. */
@ApiSchema({ description: 'A partner: every key, or with `fields` only those keys' })
export class PartnerRecord {
  @Source(SOME) source?: string;
  @IdAtSource(SOME) id_at_source?: string;
  @Accession(SOME) external_id?: string | null;
  @Text(SOME) name?: string;
  @TextOrNull(SOME) acronym?: string | null;
  @Bool(SOME) is_clinical?: boolean;
  @OneOfOrNull(GEO_CATEGORIES, SOME) geo_category?: string | null;
  @OneOfOrNull(SECTOR_CATEGORIES, SOME)
  sector_category?: string | null;
  @TextOrNull(SOME) address?: string | null;
  @TextOrNull({ ...SOME, description: 'ISO 3166-1 alpha-2' }) country_code?: string | null;
  @Metadata(SOME) metadata?: string;
}

export class PartnersPage {
  @ListOf(PartnerRecord) results!: PartnerRecord[];
}
