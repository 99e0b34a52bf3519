import { Controller, Get, Param, Res, StreamableFile } from '@nestjs/common';
import { ApiResponse, ApiTags } from '@nestjs/swagger';
import type { ServerResponse } from 'node:http';
import { CurrentPrincipal, Principal, RequireKinds } from '@app/auth';
import { actorFromPrincipal } from '../audit/audit.service';
import { ApiCall } from '../common/api-docs';
import { AuditCrateParams } from './audit-crate.dto';
import { AuditCrateService } from './audit-crate.service';

@ApiTags('admin')
@Controller('api/projects/:acronym/audit-crate')
@RequireKinds('global')
export class AuditCrateController {
  constructor(private readonly crates: AuditCrateService) {}

  @ApiCall({
    summary: "The auditor's export of a project: a Five Safes RO-Crate (zip)",
    caller: 'global key only',
    description:
      'An RO-Crate 1.2 in a BagIt bag, zipped, following the Five Safes RO-Crate profile 0.4: ' +
      'the project with its contracts, its datasets with legal bases, DRS copies and data-use ' +
      'terms (DUO), everyone granted access (when, by whom), every trail entry of the project ' +
      'with its hashes, every byte range served, and the signed trail head. Streamed; the ' +
      'export itself is recorded in the trail. See docs/security.md.',
    responses: [],
    errors: [404],
  })
  // The body is a ZIP, not the catalog's JSON (errors stay JSON envelopes).
  @ApiResponse({
    status: 200,
    description: 'The crate',
    content: { 'application/zip': { schema: { type: 'string', format: 'binary' } } },
  })
  @Get()
  async crate(
    @Param() { acronym }: AuditCrateParams,
    @CurrentPrincipal() principal: Principal | undefined,
    @Res({ passthrough: true }) res: ServerResponse,
  ): Promise<StreamableFile> {
    const crate = await this.crates.open(acronym, actorFromPrincipal(principal));
    // The profile's HTTP advice: the RO-Crate profile as a Link.
    res.setHeader('Link', '<https://w3id.org/ro/crate>; rel="profile"');
    // A client that leaves stops the export: no more pages are read for it.
    res.on('close', () => {
      if (!crate.stream.readableEnded) crate.stream.destroy();
    });
    return new StreamableFile(crate.stream, {
      type: 'application/zip',
      disposition: `attachment; filename="${crate.fileName}"`,
    });
  }
}
