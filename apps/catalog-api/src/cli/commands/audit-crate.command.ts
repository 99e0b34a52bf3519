import { AuditCrateService } from '../../audit-crate/audit-crate.service';
import { allowOptions, CliCommand, option, positional } from '../cli-command';

/**
 * The twin of `GET /api/projects/{acronym}/audit-crate`: the same crate, written to a file
 * (default: its own name in the working directory; never over an existing file), recorded in the
 * trail as the CLI's.
 */
export const auditCrateCommand: CliCommand = {
  name: 'audit-crate',
  usage: '<project acronym> [--out FILE.zip]',
  summary: "Write the auditor's export of a project (a Five Safes RO-Crate zip) to a file",
  async run(ctx, args) {
    allowOptions(args, ['out']);
    const acronym = positional(args, 0, 'project acronym');
    const out = option(args, 'out', true);
    let file = '';
    // Refused before the export is cut (and recorded) when the file is there already.
    const crate = await ctx.app
      .get(AuditCrateService)
      .open(acronym, ctx.actor, (fileName) => (file = ctx.newFile(out ?? fileName)));
    return ctx.writeFile(file, crate.stream);
  },
};
