import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiQuery, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, OptionalAuth, Principal } from '@app/auth';
import { ApiCachedRead } from '../common/api-docs';
import { CachedJsonResponder } from '../common/cached-json.responder';
import { exactValues } from '../common/query-input';
import { viewerIdentity } from '../permissions/viewer';
import { KeyHolderQuery, PartnersKeyQuery, PartnersPage, PartnersQuery } from './partners.dto';
import { PARTNER_FILTERS } from './partners.repository';
import { PartnerQuery, PartnersService } from './partners.service';

@ApiTags('catalog')
@Controller('api/partners')
export class PartnersController {
  constructor(
    private readonly partners: PartnersService,
    private readonly responder: CachedJsonResponder,
  ) {}

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
  async list(
    @Query() given: PartnersQuery,
    @KeyHolderQuery() keyed: PartnersKeyQuery,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentPrincipal() principal: Principal | undefined,
  ): Promise<void> {
    const query: PartnerQuery = { published: true, exact: exactValues(given, PARTNER_FILTERS) };
    if (principal !== undefined) {
      query.published = keyed.published;
      query.fields = keyed.fields;
    }
    await this.responder.respond(
      req,
      res,
      { route: 'partners', identity: viewerIdentity(principal), params: { ...query } },
      (manager) => this.partners.list(manager, query),
    );
  }
}
