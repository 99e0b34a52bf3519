import { applyDecorators, Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Public } from '@app/auth';
import { ApiCall, ApiError } from '../common/api-docs';
import { EntitlementAnswer } from '../common/response-properties';
import { AccessRequestRefusalsService } from './access-request-refusals.service';
import { AccessRequestsService, BatchCounts } from './access-requests.service';
import { ENTITLEMENTS, parseEntitlements } from './entitlement';

type BatchResult = { status: 'Success' } & BatchCounts;

/** Both webhook routes share their body, answer and gate; only the effect differs. */
const ApiEntitlements = (summary: string, description: string) =>
  applyDecorators(
    ApiCall({
      summary,
      caller: 'REMS, from an allowed address; no key',
      description:
        `${description} Off unless ACCESSREQ_INTEGRATION_ENABLED (else 403); the caller's ` +
        'address must match ACCESSREQ_ALLOWED_IP_ADDRESSES (else 403). The whole batch is ' +
        'validated first (400 with per-item errors, an unknown accession named) and runs in ' +
        'one transaction. The rows of one (application, resource, user) are one entitlement ' +
        '(REMS sends ended history rows with the current one); the counts are per entitlement. ' +
        'A PUT (a REMS event notification) is answered 405 naming this route.',
      body: ENTITLEMENTS,
      responses: [
        {
          status: 200,
          description: 'Applied',
          body: EntitlementAnswer,
        },
      ],
    }),
    ApiError(403, 'The integration is switched off, or the caller is not on the allow-list'),
  );

/**
 * The REMS entitlement webhook (spec §4). No API key: REMS cannot send one, so the routes are
 * public to the key guard and gated by the integration switch and the caller allow-list. The
 * gate (`AccessRequestGate`) runs once, as Express middleware installed by `createCatalogApp`,
 * before routing and before the body is read; `access-request-gate.spec.ts` holds every route
 * here to the gate's paths, and the e2e specs prove the assembled app refuses through it.
 */
@ApiTags('integrations')
@Controller('api/accessreq')
@Public()
export class AccessRequestsController {
  constructor(
    private readonly service: AccessRequestsService,
    private readonly refusals: AccessRequestRefusalsService,
  ) {}

  @ApiEntitlements(
    'Grant dataset accesses from REMS entitlements',
    'Each entitlement grants an active access to the dataset, creating a contact for an ' +
      'unknown person; its end is the latest of its rows (null: open, ' +
      'ACCESS_DEFAULT_EXPIRATION_DAYS). Idempotent per (application, resource, user); a new ' +
      'current `end` updates the expiry, an end that has passed never shortens or ends an ' +
      'access. A grant built before a recorded revocation of the same key changes nothing. ' +
      'With an identity provider, an account whose email it has not verified is refused.',
  )
  @Post()
  @HttpCode(200)
  async grant(@Body() body: unknown): Promise<BatchResult> {
    const counts = await this.refusals.watch('grant', body, () =>
      this.service.grant(parseEntitlements(body)),
    );
    return { status: 'Success', ...counts };
  }

  @ApiEntitlements(
    'Revoke dataset accesses from REMS entitlements',
    'Terminates the matching accesses and records the revocation time (`end`) per key, also ' +
      'when no access exists yet; a revocation no later than the recorded one changes nothing.',
  )
  @Post('revoke')
  @HttpCode(200)
  async revoke(@Body() body: unknown): Promise<BatchResult> {
    const counts = await this.refusals.watch('revoke', body, () =>
      this.service.revoke(parseEntitlements(body)),
    );
    return { status: 'Success', ...counts };
  }
}
