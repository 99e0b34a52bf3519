import { validateInput } from '@app/errors';
import { AuditQueryParams, toAuditQuery } from '../../admin/admin-audit.dto';
import { VocabularyAdminService } from '../../admin/vocabulary-admin.service';
import { AuditService } from '../../audit/audit.service';
import { allowOptions, CliCommand, option, positional } from '../cli-command';

export const loadVocabularyCommand: CliCommand = {
  name: 'load-vocabulary',
  usage: '<disease|phenotype|study|gene> <file> [--format obo|tsv]',
  summary: 'Load or refresh a term vocabulary from an OBO or term_id<TAB>label file',
  run(ctx, args) {
    allowOptions(args, ['format']);
    const category = positional(args, 0, 'category');
    const text = ctx.readFile(positional(args, 1, 'file'));
    return ctx.app
      .get(VocabularyAdminService)
      .load(category, text, option(args, 'format', true), ctx.actor);
  },
};

export const auditCommand: CliCommand = {
  name: 'audit',
  usage: '[--since 2026-01-01] [--object dataset:12] [--page N]',
  summary: 'Show the audit trail, newest first, 100 a page',
  async run(ctx, args) {
    allowOptions(args, ['since', 'object', 'page']);
    const given = await validateInput(AuditQueryParams, {
      since: option(args, 'since', true),
      object: option(args, 'object', true),
      page: option(args, 'page', true),
    });
    const { results, more } = await ctx.app.get(AuditService).list(toAuditQuery(given));
    return { results, pagination: { more } };
  },
};
