import { Controller, Get, Param, Query } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '@app/auth';
import { ApiCachedRead } from '../common/api-docs';
import { CachedRead, ReadSnapshot } from '../read-cache/cached-read.decorator';
import { viewerOf } from '../auth/viewer';
import { PermissionParams, PermissionQuery } from './permissions.dto';
import { PermissionsService } from './permissions.service';

@ApiTags('permissions')
@Controller('api/permissions')
export class PermissionsController {
  constructor(private readonly permissions: PermissionsService) {}

  @ApiCachedRead(
    {
      summary: 'Accessions of the datasets a person may access now',
      caller: 'any key',
      description:
        'Datasets with at least one exposure to which the person (a user, else a contact with ' +
        'this subject) has an active, unexpired access (expiring today still counts). A user ' +
        'key may ask only about its own holder (else 403). An access left out (ended, or its ' +
        'dataset not exposed) is left out silently; the global key learns why with ' +
        '`explain=true`, which answers `{subject, accessions, not_listed: [{accession, title, ' +
        'reason}]}` (reason `terminated`, `expired`, `no_accession` or `not_exposed`).',
    },
    {
      type: 'array',
      description: 'Sorted dataset accessions',
      items: { type: 'string' },
      example: ['ELU_I_131'],
    },
    404,
  )
  @Get(':user_oidc_id')
  // Expiry depends on the date, which no write bumps.
  @CachedRead({ untilEndOfUtcDay: true })
  async list(
    @Param() { user_oidc_id: oidcId }: PermissionParams,
    @Query() { explain }: PermissionQuery,
    @CurrentPrincipal() principal: Principal | undefined,
    @ReadSnapshot() manager: EntityManager,
  ) {
    if (explain) return this.permissions.explain(manager, viewerOf(principal).kind, oidcId);
    // In the read's snapshot: a second connection per request could exhaust the pool under load.
    return this.permissions.datasetAccessionsFor(manager, viewerOf(principal), oidcId);
  }
}
