import { Body, Controller, Delete, HttpCode, Param, Post, Put, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireKinds } from '@app/auth';
import type { Principal } from '@app/auth';
import { actorFromPrincipal } from '../audit/audit.service';
import { ApiCall } from '../common/api-docs';
import {
  DatasetVpDiscoverable,
  EndpointCreated,
  ExposureView,
  GrantRevoked,
  GrantView,
} from './admin-responses.dto';
import {
  CreateEndpointBody,
  CreateExposureBody,
  DatasetRefParams,
  ExposureIdParams,
  GrantBody,
  VpDiscoverableBody,
  WithdrawExposureBody,
} from './admin-catalog.dto';
import { DatasetsAdminService } from './datasets-admin.service';
import { EndpointsAdminService } from './endpoints-admin.service';
import { ExposuresAdminService } from './exposures-admin.service';
import { GrantsAdminService } from './grants-admin.service';

/** Endpoints, exposures and grants (§5); the global key only. */
@ApiTags('admin')
@Controller('api/admin')
@RequireKinds('global')
export class AdminCatalogController {
  constructor(
    private readonly endpoints: EndpointsAdminService,
    private readonly exposures: ExposuresAdminService,
    private readonly grants: GrantsAdminService,
    private readonly datasets: DatasetsAdminService,
  ) {}

  /** 201 with the endpoint's 64-character key, shown this once. */
  @ApiCall({
    summary: 'Register an endpoint (a catalog that pulls from us) with its own key',
    caller: 'global key only',
    responses: [{ status: 201, description: 'The endpoint and its key', body: EndpointCreated }],
    errors: [409],
  })
  @Post('endpoints')
  createEndpoint(@Body() body: CreateEndpointBody, @CurrentPrincipal() principal?: Principal) {
    return this.endpoints.create(body, actorFromPrincipal(principal));
  }

  @ApiCall({
    summary: 'Expose a dataset to an endpoint',
    caller: 'global key only',
    description:
      'One active exposure per dataset and endpoint (a second is a 409). Also publishes the ' +
      "partners and cohorts of the dataset's declarations.",
    responses: [{ status: 201, description: 'The exposure', body: ExposureView }],
    errors: [409],
  })
  @Post('exposures')
  expose(@Body() body: CreateExposureBody, @CurrentPrincipal() principal?: Principal) {
    return this.exposures.create(body, actorFromPrincipal(principal));
  }

  /** Withdraws: the exposure is deprecated with its reason and kept. */
  @ApiCall({
    summary: 'Withdraw an exposure: deprecated with its reason, and kept',
    caller: 'global key only',
    responses: [{ status: 200, description: 'The withdrawn exposure', body: ExposureView }],
    errors: [404, 409],
  })
  @Delete('exposures/:id')
  @HttpCode(200)
  withdraw(
    @Param() { id }: ExposureIdParams,
    @Body() body: WithdrawExposureBody,
    @CurrentPrincipal() principal?: Principal,
  ) {
    return this.exposures.withdraw(id, body, actorFromPrincipal(principal));
  }

  /** 201 when the grant is new, 200 when it already existed. */
  @ApiCall({
    summary: 'Grant `protected` on a dataset, project or contract to a user or group',
    caller: 'global key only',
    responses: [
      { status: 201, description: 'Granted', body: GrantView },
      { status: 200, description: 'The grant already existed', body: GrantView },
    ],
  })
  @Post('grants')
  async grant(
    @Body() body: GrantBody,
    @Res({ passthrough: true }) res: Response,
    @CurrentPrincipal() principal?: Principal,
  ) {
    const { grant, created } = await this.grants.grant(body, actorFromPrincipal(principal));
    res.status(created ? 201 : 200);
    return grant;
  }

  @ApiCall({
    summary: 'Revoke a grant',
    caller: 'global key only',
    responses: [{ status: 200, description: 'Revoked', body: GrantRevoked }],
    errors: [404],
  })
  @Delete('grants')
  @HttpCode(200)
  revoke(@Body() body: GrantBody, @CurrentPrincipal() principal?: Principal) {
    return this.grants.revoke(body, actorFromPrincipal(principal));
  }

  @ApiCall({
    summary: 'Tag a dataset for the EJP RD Virtual Platform in the FAIR Data Point, or untag it',
    caller: 'global key only',
    description:
      "Sets the dataset's own `ejp:vpConnection ejp:VPDiscoverable` flag, shown in its " +
      '`/fdp/dataset/{accession}` record. FDP_VP_DISCOVERABLE=true tags every dataset regardless.',
    responses: [{ status: 200, description: "The dataset's flag", body: DatasetVpDiscoverable }],
    errors: [404],
  })
  @Put('datasets/:dataset/vp-discoverable')
  setVpDiscoverable(
    @Param() { dataset }: DatasetRefParams,
    @Body() body: VpDiscoverableBody,
    @CurrentPrincipal() principal?: Principal,
  ) {
    return this.datasets.setVpDiscoverable(
      dataset,
      body.discoverable,
      actorFromPrincipal(principal),
    );
  }
}
