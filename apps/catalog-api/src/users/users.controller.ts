import { Controller, Get, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AllowBearer, CurrentPrincipal, Principal, RequireKinds } from '@app/auth';
import { CachedJsonResponder } from '../common/cached-json.responder';
import { viewerIdentity } from '../permissions/viewer';

interface UserRow {
  id: number;
  username: string;
  first_name: string;
  last_name: string;
}

@Controller('api/users')
export class UsersController {
  constructor(private readonly responder: CachedJsonResponder) {}

  /** Active users for pickers; `text` falls back to the username when there is no name. */
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
        const rows = await manager.query<UserRow[]>(
          `SELECT id, username, first_name, last_name FROM users WHERE is_active
           ORDER BY first_name, last_name, id`,
        );
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
