import { ConflictError } from '@app/errors';
import { AuditTrailService } from '../../audit/audit-trail.service';
import { allowOptions, CliCommand, CliUsageError, option, positional } from '../cli-command';

/**
 * `trail verify` exits 1 naming the first broken entry (stderr) when the chain does not hold;
 * `trail prune` deletes what AUDIT_RETENTION_DAYS (or `--before`) no longer keeps, after a
 * signed checkpoint; `trail head` prints the signed head.
 */
export const trailCommand: CliCommand = {
  name: 'trail',
  usage: 'verify | prune [--before 2026-01-01T00:00:00Z] | head',
  summary: "Verify the audit trail's chain, prune it past retention, or print its signed head",
  async run(ctx, args) {
    const trail = ctx.app.get(AuditTrailService);
    const action = positional(args, 0, 'verify|prune|head');
    if (action === 'verify') {
      allowOptions(args, []);
      const result = await trail.verify();
      if (result.broken !== undefined) {
        throw new ConflictError(
          `The trail is broken at entry ${result.broken.id}: ${result.broken.message}`,
          { ...result },
        );
      }
      return result;
    }
    if (action === 'prune') {
      allowOptions(args, ['before']);
      const before = option(args, 'before', true);
      if (before !== undefined && Number.isNaN(Date.parse(before))) {
        throw new CliUsageError('--before must be an ISO 8601 date-time');
      }
      return trail.prune(before === undefined ? undefined : new Date(before));
    }
    if (action === 'head') {
      allowOptions(args, []);
      return trail.signedHead();
    }
    throw new CliUsageError(`unknown action "${action}"`);
  },
};
