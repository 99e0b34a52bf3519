import {
  Body,
  Controller,
  Get,
  Headers,
  HttpCode,
  Options,
  Param,
  Post,
  Query,
  Req,
  UseFilters,
} from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Public } from '@app/auth';
import { ApiErrorResponses } from '@app/platform';
import type { DrsCredentials } from './drs-authorizer';
import {
  AccessParams,
  BulkAccessBody,
  BulkAccessParams,
  BulkObjectsBody,
  BulkOptionsBody,
  ExpandQuery,
  ObjectParams,
  PassportsBody,
} from './drs.dto';
import { DrsErrorsFilter, noteDrsRequest } from './drs-errors.filter';
import { DrsService } from './drs.service';

/** The login token of `Authorization: Bearer …`, if the request has one. */
function bearerOf(authorization: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return match?.[1];
}

/**
 * GA4GH DRS 1.5 (ga4gh/data-repository-service-schemas, drs-1.5.0): the stored datasets' files and manifests as DRS
 * objects. Outside the API-key guard: a DRS client presents a GA4GH passport (POST bodies) or a
 * login token (Authorization: Bearer), which DrsService checks for every object.
 */
@ApiTags('drs')
@Controller('ga4gh/drs/v1')
@Public()
@UseFilters(DrsErrorsFilter)
export class DrsController {
  constructor(private readonly drs: DrsService) {}

  @ApiOperation({
    summary: 'Service-info: DRS 1.5, maxBulkRequestLength, the object count and total size',
  })
  @ApiResponse({ status: 200, description: 'GA4GH service-info with the `drs` members' })
  @Get('service-info')
  serviceInfo(): Promise<Record<string, unknown>> {
    return this.drs.serviceInfo();
  }

  // Before the routes with an object id: `objects/access` is no object's id.
  @ApiOperation({ summary: 'Access URLs of several objects' })
  @ApiResponse({ status: 200, description: 'The URLs granted; the others unresolved by code' })
  @ApiErrorResponses(400, 401, 413, 501)
  @Post('objects/access')
  @HttpCode(200)
  bulkAccess(
    @Body() body: BulkAccessBody,
    @Headers('authorization') authorization: string | undefined,
    @Req() req: Request,
  ) {
    return this.drs.bulkAccessUrls(
      body.bulk_object_access_ids,
      credentials(req, body.passports, authorization),
    );
  }

  @ApiOperation({ summary: 'Access URLs of several objects with one access id' })
  @ApiResponse({ status: 200, description: 'The URLs granted; the others unresolved by code' })
  @ApiErrorResponses(400, 401, 413, 501)
  @Post('objects/access/:access_id')
  @HttpCode(200)
  bulkAccessOne(
    @Param() { access_id }: BulkAccessParams,
    @Body() body: BulkObjectsBody,
    @Headers('authorization') authorization: string | undefined,
    @Req() req: Request,
  ) {
    return this.drs.bulkAccessUrls(
      body.bulk_object_ids.map((id) => ({ bulk_object_id: id, bulk_access_ids: [access_id] })),
      credentials(req, body.passports, authorization),
    );
  }

  @ApiOperation({
    summary: 'How to authorize for an object: PassportAuth (the catalog) or BearerAuth',
  })
  @ApiResponse({ status: 200, description: 'Authorizations' })
  @ApiErrorResponses(400, 404, 501)
  @Options('objects/:object_id')
  options(@Param() { object_id }: ObjectParams) {
    return this.drs.authorizations(object_id);
  }

  @ApiOperation({ summary: 'An object, to a login token (Authorization: Bearer) that may read it' })
  @ApiResponse({ status: 200, description: 'DrsObject' })
  @ApiErrorResponses(400, 401, 403, 404, 501)
  @Get('objects/:object_id')
  object(
    @Param() { object_id }: ObjectParams,
    @Query() _query: ExpandQuery,
    @Headers('authorization') authorization: string | undefined,
    @Req() req: Request,
  ) {
    return this.drs.object(object_id, credentials(req, undefined, authorization));
  }

  @ApiOperation({ summary: 'An object, to the holder of a passport whose visas grant its dataset' })
  @ApiResponse({ status: 200, description: 'DrsObject' })
  @ApiErrorResponses(400, 401, 403, 404, 501)
  @Post('objects/:object_id')
  @HttpCode(200)
  postObject(
    @Param() { object_id }: ObjectParams,
    @Body() body: PassportsBody,
    @Headers('authorization') authorization: string | undefined,
    @Req() req: Request,
  ) {
    return this.drs.object(object_id, credentials(req, body.passports, authorization));
  }

  @ApiOperation({ summary: 'How to authorize for several objects' })
  @ApiResponse({ status: 200, description: 'Authorizations of each object found' })
  @ApiErrorResponses(400, 413, 501)
  @Options('objects')
  bulkOptions(@Body() body: BulkOptionsBody) {
    return this.drs.bulkAuthorizations(body.bulk_object_ids);
  }

  @ApiOperation({ summary: 'Several objects (passports or a login token)' })
  @ApiResponse({ status: 200, description: 'The objects granted; the others unresolved by code' })
  @ApiErrorResponses(400, 401, 413, 501)
  @Post('objects')
  @HttpCode(200)
  bulkObjects(
    @Body() body: BulkObjectsBody,
    @Headers('authorization') authorization: string | undefined,
    @Req() req: Request,
  ) {
    return this.drs.bulkObjects(
      body.bulk_object_ids,
      credentials(req, body.passports, authorization),
    );
  }

  @ApiOperation({
    summary: 'A short-lived access URL of an object, to a login token that may read it',
  })
  @ApiResponse({ status: 200, description: 'AccessURL' })
  @ApiErrorResponses(400, 401, 403, 404, 501)
  @Get('objects/:object_id/access/:access_id')
  access(
    @Param() { object_id, access_id }: AccessParams,
    @Headers('authorization') authorization: string | undefined,
    @Req() req: Request,
  ) {
    return this.drs.accessUrl(object_id, access_id, credentials(req, undefined, authorization));
  }

  @ApiOperation({ summary: 'A short-lived access URL of an object, to a passport holder' })
  @ApiResponse({ status: 200, description: 'AccessURL' })
  @ApiErrorResponses(400, 401, 403, 404, 501)
  @Post('objects/:object_id/access/:access_id')
  @HttpCode(200)
  postAccess(
    @Param() { object_id, access_id }: AccessParams,
    @Body() body: PassportsBody,
    @Headers('authorization') authorization: string | undefined,
    @Req() req: Request,
  ) {
    return this.drs.accessUrl(
      object_id,
      access_id,
      credentials(req, body.passports, authorization),
    );
  }
}

/** The request's credentials; the subject is noted on the request for the refusal audit. */
function credentials(
  req: Request,
  passports: string[] | undefined,
  authorization: string | undefined,
): DrsCredentials {
  return {
    passports,
    bearer: bearerOf(authorization),
    onSubject: (subject) => noteDrsRequest(req, { subject }),
  };
}
