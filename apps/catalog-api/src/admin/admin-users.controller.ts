import { Body, Controller, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { CurrentPrincipal, RequireKinds } from '@app/auth';
import type { Principal } from '@app/auth';
import { actorFromPrincipal } from '../audit/audit.service';
import { parseId } from './admin-input';
import { UsersAdminService, UserView } from './users-admin.service';

@Controller('api/admin/users')
@RequireKinds('global')
export class AdminUsersController {
  constructor(private readonly users: UsersAdminService) {}

  /** 201 with the user and its key, which is shown this once. */
  @Post()
  create(@Body() body: unknown, @CurrentPrincipal() principal?: Principal) {
    return this.users.create(body, actorFromPrincipal(principal));
  }

  @Post(':id/api-key')
  @HttpCode(200)
  rotateKey(@Param('id') id: string, @CurrentPrincipal() principal?: Principal) {
    return this.users.rotateKey(parseId(id), actorFromPrincipal(principal));
  }

  @Patch(':id')
  update(
    @Param('id') id: string,
    @Body() body: unknown,
    @CurrentPrincipal() principal?: Principal,
  ): Promise<UserView> {
    return this.users.update(parseId(id), body, actorFromPrincipal(principal));
  }
}
