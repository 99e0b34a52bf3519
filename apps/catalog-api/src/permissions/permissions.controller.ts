import { Controller, Get, Param } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiParam, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '@app/auth';
import { ForbiddenError, ValidationFailedError } from '@app/errors';
import { ApiCachedRead } from '../common/api-docs';
import { CachedRead, ReadSnapshot } from '../read-cache/cached-read.decorator';
import { UsersRepository } from '../users/users.repository';
import { viewerOf } from './viewer';
import { PermissionsService } from './permissions.service';

const OIDC_ID_MAX = 64;

@ApiTags('permissions')
@Controller('api/permissions')
export class PermissionsController {
  constructor(
    private readonly permissions: PermissionsService,
    private readonly users: UsersRepository,
  ) {}

  @ApiCachedRead(
    {
      summary: 'Accessions of the datasets a person may access now',
      caller: 'any key',
      description:
        'Datasets with at least one exposure to which the person (a user, else a contact with ' +
        'this subject) has an active, unexpired access (expiring today still counts). A user ' +
        'key may ask only about its own holder (else 403).',
    },
    {
      type: 'array',
      description: 'Sorted dataset accessions',
      items: { type: 'string' },
      example: ['ELU_I_131'],
    },
    404,
  )
  @ApiParam({
    name: 'user_oidc_id',
    description: "The person's identity-provider subject",
    schema: { type: 'string', minLength: 1, maxLength: OIDC_ID_MAX },
  })
  @Get(':user_oidc_id')
  // Expiry depends on the date, which no write bumps.
  @CachedRead({ untilEndOfUtcDay: true })
  async list(
    @Param('user_oidc_id') oidcId: string,
    @CurrentPrincipal() principal: Principal | undefined,
    @ReadSnapshot() manager: EntityManager,
  ) {
    const viewer = viewerOf(principal);
    if (oidcId.length > OIDC_ID_MAX) {
      throw new ValidationFailedError([
        { parameter: 'user_oidc_id', message: 'must be at most 64 characters' },
      ]);
    }
    // In the read's snapshot: a second connection per request could exhaust the pool under load.
    if (viewer.kind === 'user') await this.requireSelf(manager, viewer.userId, oidcId);
    return this.permissions.datasetAccessions(manager, oidcId);
  }

  /** A user key may only read its own holder's permissions. */
  private async requireSelf(manager: EntityManager, userId: number, oidcId: string): Promise<void> {
    if ((await this.users.oidcIdOf(userId, manager)) !== oidcId) {
      throw new ForbiddenError('A user key may only read its own permissions');
    }
  }
}
