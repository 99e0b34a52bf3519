import { validateInput } from '@app/errors';
import { CreateSubscriptionBody } from '../../webhooks/webhooks.dto';
import { WebhooksService } from '../../webhooks/webhooks.service';
import {
  allowOptions,
  CliCommand,
  CliUsageError,
  listOption,
  option,
  positional,
} from '../cli-command';

/** The subscriptions of `POST /api/admin/subscriptions` and their dead letters, from the shell. */
export const subscriptionsCommand: CliCommand = {
  name: 'subscriptions',
  usage:
    'create --url URL [--events a.b,c.d] [--secret whsec_...] | list | delete <id> | dead-letters <id> | replay <id>',
  summary: "Manage webhook subscriptions to the audit trail's events",
  async run(ctx, args) {
    const webhooks = ctx.app.get(WebhooksService);
    const action = positional(args, 0, 'create|list|delete|dead-letters|replay');
    if (action === 'create') {
      allowOptions(args, ['url', 'events', 'secret']);
      const body = await validateInput(CreateSubscriptionBody, {
        url: option(args, 'url'),
        events: listOption(args, 'events'),
        secret: option(args, 'secret', true),
      });
      return webhooks.create(body, ctx.actor);
    }
    allowOptions(args, []);
    if (action === 'list') return { results: await webhooks.list() };
    const id = Number(positional(args, 1, 'id'));
    if (!Number.isInteger(id) || id < 1) throw new CliUsageError('<id> must be a subscription id');
    if (action === 'delete') return webhooks.remove(id, ctx.actor);
    if (action === 'dead-letters') return { results: await webhooks.deadLetters(id) };
    if (action === 'replay') return webhooks.replay(id, undefined, ctx.actor);
    throw new CliUsageError(`unknown action "${action}"`);
  },
};
