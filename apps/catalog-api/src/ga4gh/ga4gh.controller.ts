import { Controller, Get, Header, Param, Query, Res, StreamableFile } from '@nestjs/common';
import type { Response } from 'express';
import { ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import {
  AllowBearer,
  CurrentPrincipal,
  LOGIN_SUBJECT_HEADER,
  Public,
  RequireKinds,
  ScopedRoute,
} from '@app/auth';
import type { Principal } from '@app/auth';
import { ForbiddenError } from '@app/errors';
import { BROKER_KIND, VISAS_SCOPE } from '../auth/catalog-key.resolver';
import { ApiCall } from '../common/api-docs';
import type { PermissionsExplained } from '../permissions/permissions.dto';
import { PermissionsService } from '../permissions/permissions.service';
import { JwkSetBody, PassportBody, VisaPermissionParams, VisaPermissionQuery } from './ga4gh.dto';
import { VisasService } from './visas.service';

/**
 * The catalog as a GA4GH Passport visa issuer, in REMS's shape (CSCfi/rems
 * src/clj/rems/api/permissions.clj): a passport broker reads a person's
 * `ControlledAccessGrants` visas, and verifies them with the keys at /api/jwk.
 */
@ApiTags('ga4gh')
@Controller('api')
export class Ga4ghController {
  constructor(
    private readonly visas: VisasService,
    private readonly permissions: PermissionsService,
    private readonly dataSource: DataSource,
  ) {}

  @ApiCall({
    summary: "A person's access grants as signed GA4GH Passport visas",
    caller: "global or broker key, or the person's own bearer token",
    description:
      'One `ControlledAccessGrants` visa per active, unexpired access to a dataset with an ' +
      'exposure (the datasets /api/permissions lists); `value` is the dataset accession. An ' +
      'unknown person has an empty list. A bearer token may read only its own subject (else ' +
      '403); user and endpoint keys are refused. 503 while no signing key is configured. ' +
      'The global key learns why an access has no visa with `explain=true` (any other caller: ' +
      '403), which answers as /api/permissions does: `{subject, accessions, not_listed: ' +
      '[{accession, title, reason}]}` (reason `terminated`, `expired`, `no_accession` or ' +
      '`not_exposed`; an unknown person is a 404).',
    responses: [{ status: 200, description: 'The passport', body: PassportBody }],
    // Only with explain=true: without it an unknown person has an empty passport.
    errors: [404],
  })
  @Get('ga4gh/permissions/:user_oidc_id')
  @ScopedRoute(VISAS_SCOPE)
  @RequireKinds('global', BROKER_KIND, 'bearer')
  @AllowBearer()
  // Signed tokens: neither shared caches nor the browser keep them.
  @Header('Cache-Control', 'no-store')
  async passport(
    @Param() { user_oidc_id: subject }: VisaPermissionParams,
    @Query() { expired, explain }: VisaPermissionQuery,
    @CurrentPrincipal() principal: Principal,
    @Res({ passthrough: true }) res: Response,
  ): Promise<StreamableFile | PermissionsExplained> {
    if (principal.kind === 'bearer' && principal.id !== subject) {
      throw new ForbiddenError('A login may only read its own visas');
    }
    // A visa is issued for exactly the accesses /api/permissions lists, so the same reasons hold.
    if (explain) return this.permissions.explain(this.dataSource.manager, principal.kind, subject);
    // Says the answer is a verified login's own (a broker forwarding a login relies on it: a
    // catalog that did not verify the login would answer with the broker's rights instead).
    if (principal.kind === 'bearer')
      res.setHeader(LOGIN_SUBJECT_HEADER, encodeURIComponent(subject));
    // The passport (PassportBody) as JSON already: a 1,000-visa passport is about a megabyte,
    // sent as it was remembered rather than serialised again on every read.
    const body = await this.visas.passport(subject, expired ?? false);
    return new StreamableFile(body, {
      type: 'application/json; charset=utf-8',
      length: body.length,
    });
  }

  @ApiCall({
    summary: 'The public keys that verify the visas (JWKS)',
    caller: 'public',
    description:
      "The visas' `jku`. Lists a new key before it signs and a retired key until every visa " +
      'it signed has expired. 503 while no signing key is configured.',
    responses: [{ status: 200, description: 'The JWK Set', body: JwkSetBody }],
  })
  @Get('jwk')
  @Public()
  @Header('Cache-Control', 'public, max-age=300')
  jwks(): Promise<JwkSetBody> {
    return this.visas.jwks();
  }
}
