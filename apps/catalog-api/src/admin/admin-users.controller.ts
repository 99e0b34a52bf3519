import { Body, Controller, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireKinds } from '@app/auth';
import type { Principal } from '@app/auth';
import { actorFromPrincipal } from '../audit/audit.service';
import { ApiCall } from '../common/api-docs';
import { CreateUserBody, UpdateUserBody, UserIdParams } from './admin-users.dto';
import { UserApiKey, UserCreated, UserView } from './admin-responses.dto';
import type { UserView as UserRow } from '../users/users.repository';
import { UsersAdminService } from './users-admin.service';

@ApiTags('admin')
@Controller('api/admin/users')
@RequireKinds('global')
export class AdminUsersController {
  constructor(private readonly users: UsersAdminService) {}

  /** 201 with the user and its key, which is shown this once. */
  @ApiCall({
    summary: 'Create a user with a personal API key',
    caller: 'global key only',
    responses: [
      {
        status: 201,
        description: 'The user and its key',
        body: UserCreated,
      },
    ],
    errors: [409],
  })
  @Post()
  create(@Body() body: CreateUserBody, @CurrentPrincipal() principal?: Principal) {
    return this.users.create(body, actorFromPrincipal(principal));
  }

  @ApiCall({
    summary: "Replace a user's API key (the old one stops working)",
    caller: 'global key only',
    responses: [
      {
        status: 200,
        description: 'The new key',
        body: UserApiKey,
      },
    ],
    errors: [404],
  })
  @Post(':id/api-key')
  @HttpCode(200)
  rotateKey(@Param() { id }: UserIdParams, @CurrentPrincipal() principal?: Principal) {
    return this.users.rotateKey(id, actorFromPrincipal(principal));
  }

  @ApiCall({
    summary: 'Activate or deactivate a user, or change its groups, subject or affiliation',
    caller: 'global key only',
    responses: [{ status: 200, description: 'The user', body: UserView }],
    errors: [404, 409],
  })
  @Patch(':id')
  update(
    @Param() { id }: UserIdParams,
    @Body() body: UpdateUserBody,
    @CurrentPrincipal() principal?: Principal,
  ): Promise<UserRow> {
    return this.users.update(id, body, actorFromPrincipal(principal));
  }
}
