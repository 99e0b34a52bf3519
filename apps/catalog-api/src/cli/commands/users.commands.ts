import { validateInput } from '@app/errors';
import { DataSource } from 'typeorm';
import { CreateUserBody, UpdateUserBody } from '../../admin/admin-users.dto';
import { UsersAdminService } from '../../admin/users-admin.service';
import { UsersRepository } from '../../users/users.repository';
import {
  allowOptions,
  booleanOption,
  CliCommand,
  CliContext,
  CliUsageError,
  listOption,
  option,
  positional,
} from '../cli-command';

/** A user given by id or username. */
async function userId(ctx: CliContext, ref: string): Promise<number> {
  if (/^\d+$/.test(ref)) return Number(ref);
  const id = await ctx.app.get(UsersRepository).idByUsername(ctx.app.get(DataSource).manager, ref);
  if (id === undefined) throw new CliUsageError(`no user "${ref}"`);
  return id;
}

export const createUserCommand: CliCommand = {
  name: 'create-user',
  usage:
    '--username U --first-name F --last-name L --email E [--oidc-id S] [--groups a,b] [--affiliation P]',
  summary: 'Create a user; prints its API key (shown this once)',
  async run(ctx, args) {
    allowOptions(args, [
      'username',
      'first-name',
      'last-name',
      'email',
      'oidc-id',
      'groups',
      'affiliation',
    ]);
    const body = await validateInput(
      CreateUserBody,
      {
        username: option(args, 'username'),
        first_name: option(args, 'first-name'),
        last_name: option(args, 'last-name'),
        email: option(args, 'email'),
        oidc_id: option(args, 'oidc-id', true),
        groups: listOption(args, 'groups'),
        affiliation: option(args, 'affiliation', true),
      },
      'body',
    );
    return ctx.app.get(UsersAdminService).create(body, ctx.actor);
  },
};

export const rotateKeyCommand: CliCommand = {
  name: 'rotate-key',
  usage: '<user id or username>',
  summary: 'Give a user a new API key; the old one stops working at once',
  async run(ctx, args) {
    allowOptions(args, []);
    const id = await userId(ctx, positional(args, 0, 'user'));
    return ctx.app.get(UsersAdminService).rotateKey(id, ctx.actor);
  },
};

export const updateUserCommand: CliCommand = {
  name: 'update-user',
  usage:
    '<user id or username> [--active true|false] [--groups a,b] [--oidc-id S] [--affiliation P]',
  summary: 'Activate or deactivate a user, set groups, identity-provider subject, affiliation',
  async run(ctx, args) {
    allowOptions(args, ['active', 'groups', 'oidc-id', 'affiliation']);
    const id = await userId(ctx, positional(args, 0, 'user'));
    const body = await validateInput(
      UpdateUserBody,
      {
        is_active: booleanOption(args, 'active'),
        groups: listOption(args, 'groups'),
        oidc_id: option(args, 'oidc-id', true),
        affiliation: option(args, 'affiliation', true),
      },
      'body',
    );
    return ctx.app.get(UsersAdminService).update(id, body, ctx.actor);
  },
};
