import { Controller, Get, Req } from '@nestjs/common';
import type { Request } from 'express';
import type { EntityManager } from 'typeorm';
import { ApiQuery, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, OptionalAuth, Principal } from '@app/auth';
import { ApiCachedRead, ApiExactFilterQueries, ApiFieldsQuery } from '../common/api-docs';
import { PARTNER_SCHEMA, resultsBody } from '../common/api-schemas';
import { RawQuery, readBoolean, readExactFilters, readFieldList } from '../common/query-params';
import { CachedRead, ReadSnapshot } from '../read-cache/cached-read.decorator';
import { PARTNER_FIELDS } from './partner.exporter';
import { PARTNER_FILTERS } from './partners.repository';
import { PartnerQuery, PartnersService } from './partners.service';

@ApiTags('catalog')
@Controller('api/partners')
export class PartnersController {
  constructor(private readonly partners: PartnersService) {}

  /**
   * Without a key: published partners, `published` and `fields` ignored. With any valid key:
   * all, then `published`. The exact filters apply to every caller.
   */
  @ApiCachedRead(
    {
      summary: 'Partners, by name',
      caller: 'public; any valid key sees more',
      description:
        'Without a key: published partners, `published` and `fields` ignored. With any valid ' +
        'key: all partners, then `published`. The exact filters apply to every caller. A key ' +
        'that is sent but invalid is a 401.',
    },
    resultsBody(PARTNER_SCHEMA),
  )
  @ApiQuery({
    name: 'published',
    required: false,
    description: 'With a key: only published (`true`) or unpublished (`false`); else 400',
    schema: { type: 'boolean' },
  })
  @ApiFieldsQuery(PARTNER_FIELDS, 'With a key only.')
  @ApiExactFilterQueries(PARTNER_FILTERS)
  @Get()
  @OptionalAuth()
  // One SELECT (PartnersRepository.find): no transaction needed.
  @CachedRead({ singleStatement: true })
  list(
    @Req() req: Request,
    @CurrentPrincipal() principal: Principal | undefined,
    @ReadSnapshot() manager: EntityManager,
  ) {
    const raw = req.query as RawQuery;
    const query: PartnerQuery = { published: true, exact: readExactFilters(raw, PARTNER_FILTERS) };
    if (principal !== undefined) {
      query.published = readBoolean(raw, 'published');
      query.fields = readFieldList(raw, 'fields', PARTNER_FIELDS);
    }
    return this.partners.list(manager, query);
  }
}
