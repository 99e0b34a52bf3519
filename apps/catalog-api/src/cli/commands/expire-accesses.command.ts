import { AccessExpiryService } from '../../accesses/access-expiry.service';
import { allowOptions, CliCommand } from '../cli-command';

export const expireAccessesCommand: CliCommand = {
  name: 'expire-accesses',
  usage: '',
  summary:
    'Terminate accesses whose last day has passed (UTC; expiring today stays valid), as the daily job does',
  run(ctx, args) {
    allowOptions(args, []);
    return ctx.app.get(AccessExpiryService).expire(ctx.actor);
  },
};
