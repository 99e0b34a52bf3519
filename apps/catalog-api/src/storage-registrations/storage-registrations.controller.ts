import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireKinds, ScopedRoute } from '@app/auth';
import type { Principal } from '@app/auth';
import { actorFromPrincipal } from '../audit/audit.service';
import { REGISTRAR_KIND, REGISTRATION_SCOPE } from '../auth/catalog-key.resolver';
import { ApiCall } from '../common/api-docs';
import { StorageRegistrationBody, StorageRegistrationResult } from './storage-registration.dto';
import { StorageRegistrationsService } from './storage-registrations.service';

/** `POST /api/registrations`: the provisioner's one write (docs/provisioner.md, registration). */
@ApiTags('registrations')
@Controller('api/registrations')
@ScopedRoute(REGISTRATION_SCOPE)
@RequireKinds(REGISTRAR_KIND, 'global')
export class StorageRegistrationsController {
  constructor(private readonly registrations: StorageRegistrationsService) {}

  @ApiCall({
    summary: 'Register one storage copy (and its transfer) of one dataset',
    caller: 'registration or global key',
    description:
      'Idempotent: one storage row per (dataset, platform, location), one transfer per ' +
      'import. The dataset is found by accession, else by title in the project with the ' +
      'acronym given, where it is created (unpublished) when missing; either way it must ' +
      'belong to that project. An unknown dataset, project or partner is a 404, an accession ' +
      'or title of another project a 409, each with `more.reason`.',
    responses: [],
    errors: [404, 409],
  })
  @ApiBody({ type: StorageRegistrationBody })
  @ApiOkResponse({ type: StorageRegistrationResult, description: 'Registered (or already was)' })
  @Post()
  @HttpCode(200)
  register(
    @Body() body: StorageRegistrationBody,
    @CurrentPrincipal() principal?: Principal,
  ): Promise<StorageRegistrationResult> {
    return this.registrations.register(body, actorFromPrincipal(principal));
  }
}
