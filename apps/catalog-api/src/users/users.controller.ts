import { Controller, Get, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiTags } from '@nestjs/swagger';
import { AllowBearer, CurrentPrincipal, Principal, RequireKinds } from '@app/auth';
import { ApiCachedRead } from '../common/api-docs';
import { CachedJsonResponder } from '../common/cached-json.responder';
import { viewerIdentity } from '../permissions/viewer';
import { UsersPage } from './users.dto';
import { UsersRepository } from './users.repository';

@ApiTags('users')
@Controller('api/users')
export class UsersController {
  constructor(
    private readonly responder: CachedJsonResponder,
    private readonly users: UsersRepository,
  ) {}

  /** Active users for pickers; `text` falls back to the username when there is no name. */
  @ApiCachedRead(
    {
      summary: 'Active users for pickers, by first then last name',
      caller: 'global or user key, or an identity-provider bearer token',
      description: 'An endpoint key is a 403; the identity provider unreachable is a 503.',
    },
    UsersPage,
  )
  @Get()
  @RequireKinds('global', 'user', 'bearer')
  @AllowBearer()
  async list(
    @Req() req: Request,
    @Res() res: Response,
    @CurrentPrincipal() principal: Principal | undefined,
  ): Promise<void> {
    await this.responder.respond(
      req,
      res,
      { route: 'users', identity: viewerIdentity(principal), params: {} },
      async (manager) => {
        const rows = await this.users.listActive(manager);
        return {
          results: rows.map((row) => ({
            id: row.id,
            text: `${row.first_name} ${row.last_name}`.trim() || row.username,
          })),
        };
      },
    );
  }
}
