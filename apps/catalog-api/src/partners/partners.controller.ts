import { Controller, Get, Query } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiQuery, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, OptionalAuth, Principal } from '@app/auth';
import { ApiCachedRead } from '../common/api-docs';
import { exactValues } from '../common/query-input';
import { CachedRead, ReadSnapshot } from '../read-cache/cached-read.decorator';
import { KeyHolderQuery, PartnersKeyQuery, PartnersPage, PartnersQuery } from './partners.dto';
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
    PartnersPage,
  )
  // The key-only parameters do not come from @Query(), so their DTO is named here.
  @ApiQuery({ type: PartnersKeyQuery })
  @Get()
  @OptionalAuth()
  // One SELECT (PartnersRepository.find): no transaction needed.
  @CachedRead({ singleStatement: true })
  list(
    @Query() given: PartnersQuery,
    @KeyHolderQuery() keyed: PartnersKeyQuery,
    @CurrentPrincipal() principal: Principal | undefined,
    @ReadSnapshot() manager: EntityManager,
  ) {
    const query: PartnerQuery = { published: true, exact: exactValues(given, PARTNER_FILTERS) };
    if (principal !== undefined) {
      query.published = keyed.published;
      query.fields = keyed.fields;
    }
    return this.partners.list(manager, query);
  }
}
