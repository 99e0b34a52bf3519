import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireKinds, ScopedRoute } from '@app/auth';
import type { Principal } from '@app/auth';
import { REGISTRAR_KIND, REGISTRATION_SCOPE } from '../auth/catalog-key.resolver';
import { ApiCall } from '../common/api-docs';
import { ReportedEventsBody, ReportedEventsResult } from './audit-events.dto';
import { actorFromPrincipal, AuditService } from './audit.service';

/**
 * `POST /api/trail/events`: the provisioner's events (DRS decisions, bytes served, imports
 * published) join the catalog's trail, with the registration key it already holds.
 */
@ApiTags('registrations')
@Controller('api/trail/events')
@ScopedRoute(REGISTRATION_SCOPE)
@RequireKinds(REGISTRAR_KIND, 'global')
export class AuditEventsController {
  constructor(private readonly audit: AuditService) {}

  @ApiCall({
    summary: 'Report events to the audit trail',
    caller: 'registration or global key',
    description:
      'Chains each event into the trail in the order given, in one transaction. Idempotent ' +
      'by event id: a report retried after a lost answer records nothing twice.',
    body: ReportedEventsBody,
    responses: [
      { status: 200, description: 'Recorded (or already were)', body: ReportedEventsResult },
    ],
  })
  @Post()
  @HttpCode(200)
  report(
    @Body() body: ReportedEventsBody,
    @CurrentPrincipal() principal?: Principal,
  ): Promise<ReportedEventsResult> {
    return this.audit.report(body.events, actorFromPrincipal(principal));
  }
}
