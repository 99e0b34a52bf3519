import { DataSource } from 'typeorm';
import { PermissionsService } from '../../permissions/permissions.service';
import { allowOptions, CliCommand, CliUsageError, positional } from '../cli-command';

/** `GET /api/permissions/<subject>?explain=true` from the shell, with the global key's rights. */
export const permissionsCommand: CliCommand = {
  name: 'permissions',
  usage: 'explain <subject>',
  summary:
    "Why each of a person's accesses is in their permissions and visas or not (terminated, expired, no_accession, not_exposed)",
  run(ctx, args) {
    allowOptions(args, []);
    const action = positional(args, 0, 'explain');
    if (action !== 'explain') throw new CliUsageError(`unknown action "${action}"`);
    const subject = positional(args, 1, 'subject');
    // Whoever runs the CLI holds the database itself: the global key's view.
    const manager = ctx.app.get(DataSource).manager;
    return ctx.app.get(PermissionsService).explain(manager, 'global', subject);
  },
};
