import { Body, Controller, Delete, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { CurrentPrincipal, RequireKinds } from '@app/auth';
import type { Principal } from '@app/auth';
import { actorFromPrincipal } from '../audit/audit.service';
import { parseId } from './admin-input';
import { EndpointsAdminService } from './endpoints-admin.service';
import { ExposuresAdminService } from './exposures-admin.service';
import { GrantsAdminService } from './grants-admin.service';

/** Endpoints, exposures and grants (§5); the global key only. */
@Controller('api/admin')
@RequireKinds('global')
export class AdminCatalogController {
  constructor(
    private readonly endpoints: EndpointsAdminService,
    private readonly exposures: ExposuresAdminService,
    private readonly grants: GrantsAdminService,
  ) {}

  /** 201 with the endpoint's 64-character key, shown this once. */
  @Post('endpoints')
  createEndpoint(@Body() body: unknown, @CurrentPrincipal() principal?: Principal) {
    return this.endpoints.create(body, actorFromPrincipal(principal));
  }

  @Post('exposures')
  expose(@Body() body: unknown, @CurrentPrincipal() principal?: Principal) {
    return this.exposures.create(body, actorFromPrincipal(principal));
  }

  /** Withdraws: the exposure is deprecated with its reason and kept. */
  @Delete('exposures/:id')
  @HttpCode(200)
  withdraw(
    @Param('id') id: string,
    @Body() body: unknown,
    @CurrentPrincipal() principal?: Principal,
  ) {
    return this.exposures.withdraw(parseId(id), body, actorFromPrincipal(principal));
  }

  /** 201 when the grant is new, 200 when it already existed. */
  @Post('grants')
  async grant(
    @Body() body: unknown,
    @Res({ passthrough: true }) res: Response,
    @CurrentPrincipal() principal?: Principal,
  ) {
    const { grant, created } = await this.grants.grant(body, actorFromPrincipal(principal));
    res.status(created ? 201 : 200);
    return grant;
  }

  @Delete('grants')
  @HttpCode(200)
  revoke(@Body() body: unknown, @CurrentPrincipal() principal?: Principal) {
    return this.grants.revoke(body, actorFromPrincipal(principal));
  }
}
