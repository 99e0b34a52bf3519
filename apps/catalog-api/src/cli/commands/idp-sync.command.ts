import { IdpSyncService } from '../../identity/idp-sync.service';
import { allowOptions, CliCommand } from '../cli-command';

export const idpSyncCommand: CliCommand = {
  name: 'idp-sync',
  usage: '',
  summary:
    'Synchronise users and contacts with the identity provider now (as POST /api/idp/force); fails if a sync is running',
  run(ctx, args) {
    allowOptions(args, []);
    return ctx.app.get(IdpSyncService).run(ctx.actor);
  },
};
