import { Controller, Get, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { CurrentPrincipal, OptionalAuth, Principal } from '@app/auth';
import { CachedJsonResponder } from '../common/cached-json.responder';
import { RawQuery, readBoolean, readFieldList } from '../common/query-params';
import { viewerIdentity } from '../permissions/viewer';
import { PARTNER_FIELDS } from './partner.exporter';
import { PartnerQuery, PartnersService } from './partners.service';

@Controller('api/partners')
export class PartnersController {
  constructor(
    private readonly partners: PartnersService,
    private readonly responder: CachedJsonResponder,
  ) {}

  /** Without a key: published partners, parameters ignored. With any valid key: all, filtered. */
  @Get()
  @OptionalAuth()
  async list(
    @Req() req: Request,
    @Res() res: Response,
    @CurrentPrincipal() principal: Principal | undefined,
  ): Promise<void> {
    const query: PartnerQuery = { published: true };
    if (principal !== undefined) {
      const raw = req.query as RawQuery;
      query.published = readBoolean(raw, 'published');
      query.fields = readFieldList(raw, 'fields', PARTNER_FIELDS);
    }
    await this.responder.respond(
      req,
      res,
      { route: 'partners', identity: viewerIdentity(principal), params: { ...query } },
      (manager) => this.partners.list(manager, query),
    );
  }
}
