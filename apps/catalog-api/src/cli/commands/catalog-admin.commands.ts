import { validateInput } from '@app/errors';
import {
  CreateEndpointBody,
  CreateExposureBody,
  DatasetRefParams,
  ExposureIdParams,
  GrantBody,
  VpDiscoverableBody,
  WithdrawExposureBody,
} from '../../admin/admin-catalog.dto';
import { DatasetsAdminService } from '../../admin/datasets-admin.service';
import { EndpointsAdminService } from '../../admin/endpoints-admin.service';
import { ExposuresAdminService } from '../../admin/exposures-admin.service';
import { GrantsAdminService } from '../../admin/grants-admin.service';
import { PublishingService, PublishableType } from '../../admin/publishing.service';
import {
  allowOptions,
  booleanOption,
  CliArgs,
  CliCommand,
  CliUsageError,
  integerOption,
  option,
  positional,
} from '../cli-command';

export const createEndpointCommand: CliCommand = {
  name: 'create-endpoint',
  usage: '--name N --url-pattern "https://catalog.example/e/${entity_id}"',
  summary: 'Register a catalog that pulls from us; prints its 64-character key (shown once)',
  async run(ctx, args) {
    allowOptions(args, ['name', 'url-pattern']);
    const body = await validateInput(
      CreateEndpointBody,
      { name: option(args, 'name'), url_pattern: option(args, 'url-pattern') },
      'body',
    );
    return ctx.app.get(EndpointsAdminService).create(body, ctx.actor);
  },
};

export const exposeCommand: CliCommand = {
  name: 'expose',
  usage: '--dataset ACCESSION --endpoint NAME --form-id N [--request-pdf]',
  summary:
    "Publish a dataset to an endpoint (also publishes its declarations' partners and cohorts)",
  async run(ctx, args) {
    allowOptions(args, ['dataset', 'endpoint', 'form-id', 'request-pdf']);
    const body = await validateInput(
      CreateExposureBody,
      {
        dataset: option(args, 'dataset'),
        endpoint: option(args, 'endpoint'),
        form_id: integerOption(args, 'form-id'),
        request_pdf_enabled: booleanOption(args, 'request-pdf'),
      },
      'body',
    );
    return ctx.app.get(ExposuresAdminService).create(body, ctx.actor);
  },
};

export const withdrawCommand: CliCommand = {
  name: 'withdraw',
  usage: '<exposure id> --reason TEXT',
  summary: 'Withdraw an exposure (deprecated with the reason, kept)',
  async run(ctx, args) {
    allowOptions(args, ['reason']);
    const { id } = await validateInput(
      ExposureIdParams,
      { id: positional(args, 0, 'exposure id') },
      'param',
    );
    const body = await validateInput(
      WithdrawExposureBody,
      { reason: option(args, 'reason') },
      'body',
    );
    return ctx.app.get(ExposuresAdminService).withdraw(id, body, ctx.actor);
  },
};

function grantBody(args: CliArgs): Promise<GrantBody> {
  allowOptions(args, ['user', 'group', 'object-type', 'object', 'permission']);
  return validateInput(
    GrantBody,
    {
      user: option(args, 'user', true),
      group: option(args, 'group', true),
      permission: option(args, 'permission', true) ?? 'protected',
      object_type: option(args, 'object-type'),
      object: integerOption(args, 'object') ?? option(args, 'object'),
    },
    'body',
  );
}

export const grantCommand: CliCommand = {
  name: 'grant',
  usage: '--user U | --group G --object-type dataset|project|contract --object ACCESSION|ID',
  summary: 'Grant `protected` on an object to a user or a group',
  async run(ctx, args) {
    return (await ctx.app.get(GrantsAdminService).grant(await grantBody(args), ctx.actor)).grant;
  },
};

export const revokeCommand: CliCommand = {
  name: 'revoke',
  usage: '--user U | --group G --object-type dataset|project|contract --object ACCESSION|ID',
  summary: 'Revoke a `protected` grant',
  async run(ctx, args) {
    return ctx.app.get(GrantsAdminService).revoke(await grantBody(args), ctx.actor);
  },
};

function publishing(published: boolean): CliCommand {
  const name = published ? 'publish' : 'unpublish';
  return {
    name,
    usage: 'partner|cohort <id or accession>',
    summary: published ? 'Publish a partner or cohort' : 'Unpublish a partner or cohort',
    run(ctx, args) {
      allowOptions(args, []);
      const type = positional(args, 0, 'partner|cohort');
      if (type !== 'partner' && type !== 'cohort')
        throw new CliUsageError('the first argument must be partner or cohort');
      const ref = positional(args, 1, 'id or accession');
      return ctx.app
        .get(PublishingService)
        .setPublished(type as PublishableType, ref, published, ctx.actor);
    },
  };
}

export const publishCommand = publishing(true);
export const unpublishCommand = publishing(false);

export const vpDiscoverableCommand: CliCommand = {
  name: 'vp-discoverable',
  usage: '<dataset accession or name> true|false',
  summary: 'Tag a dataset for the EJP RD Virtual Platform in the FAIR Data Point (or untag it)',
  async run(ctx, args) {
    allowOptions(args, []);
    const { dataset } = await validateInput(
      DatasetRefParams,
      { dataset: positional(args, 0, 'dataset accession or name') },
      'param',
    );
    const flag = positional(args, 1, 'true|false');
    if (flag !== 'true' && flag !== 'false')
      throw new CliUsageError('the second argument must be true or false');
    const body = await validateInput(VpDiscoverableBody, { discoverable: flag === 'true' }, 'body');
    return ctx.app
      .get(DatasetsAdminService)
      .setVpDiscoverable(dataset, body.discoverable, ctx.actor);
  },
};
