import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '@app/auth';
import { ForbiddenError } from '@app/errors';
import { ApiCachedRead } from '../common/api-docs';
import { CachedJsonResponder } from '../common/cached-json.responder';
import { UsersRepository } from '../users/users.repository';
import { viewerIdentity, viewerOf } from './viewer';
import { PermissionParams } from './permissions.dto';
import { PermissionsService } from './permissions.service';

/** Start of the next UTC day, in epoch ms. */
function nextUtcMidnight(now = new Date()): number {
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
}

@ApiTags('permissions')
@Controller('api/permissions')
export class PermissionsController {
  constructor(
    private readonly permissions: PermissionsService,
    private readonly responder: CachedJsonResponder,
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
  @Get(':user_oidc_id')
  async list(
    @Param() { user_oidc_id: oidcId }: PermissionParams,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentPrincipal() principal: Principal | undefined,
  ): Promise<void> {
    const viewer = viewerOf(principal);
    if (viewer.kind === 'user') await this.requireSelf(viewer.userId, oidcId);
    await this.responder.respond(
      req,
      res,
      {
        route: 'permissions',
        identity: viewerIdentity(principal),
        // Expiry depends on the date, which no write bumps: today is part of the key.
        params: { oidcId, today: new Date().toISOString().slice(0, 10) },
        expiresAt: nextUtcMidnight(),
      },
      (manager) => this.permissions.datasetAccessions(manager, oidcId),
    );
  }

  /** A user key may only read its own holder's permissions. */
  private async requireSelf(userId: number, oidcId: string): Promise<void> {
    if ((await this.users.oidcIdOf(userId)) !== oidcId) {
      throw new ForbiddenError('A user key may only read its own permissions');
    }
  }
}
