import { applyDecorators, Controller, HttpCode, Param, Post, type Type } from '@nestjs/common';
import { ApiParam, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireKinds } from '@app/auth';
import type { Principal } from '@app/auth';
import { actorFromPrincipal } from '../audit/audit.service';
import { ApiCall } from '../common/api-docs';
import { PublishedCohort, PublishedPartner } from './admin-responses.dto';
import { PublishableType, PublishingService } from './publishing.service';

const RECORD: Record<PublishableType, Type<unknown>> = {
  partner: PublishedPartner,
  cohort: PublishedCohort,
};

/** Publish and unpublish share everything but the verb. */
const ApiPublish = (type: PublishableType, publish: boolean) =>
  applyDecorators(
    ApiCall({
      summary: publish
        ? `Publish a ${type} (it gets an accession if it has none)`
        : `Unpublish a ${type}`,
      caller: 'global key only',
      responses: [{ status: 200, description: `The ${type}`, body: RECORD[type] }],
      errors: [404],
    }),
    ApiParam({
      name: 'id',
      description: `The ${type}'s id or accession`,
      schema: { type: 'string', example: 'ELU_I_42' },
    }),
  );

/** `POST /api/admin/{partners|cohorts}/{id or accession}/{publish|unpublish}`. */
@ApiTags('admin')
@Controller('api/admin')
@RequireKinds('global')
export class AdminPublishingController {
  constructor(private readonly publishing: PublishingService) {}

  @ApiPublish('partner', true)
  @Post('partners/:id/publish')
  @HttpCode(200)
  publishPartner(@Param('id') id: string, @CurrentPrincipal() principal?: Principal) {
    return this.publishing.setPublished('partner', id, true, actorFromPrincipal(principal));
  }

  @ApiPublish('partner', false)
  @Post('partners/:id/unpublish')
  @HttpCode(200)
  unpublishPartner(@Param('id') id: string, @CurrentPrincipal() principal?: Principal) {
    return this.publishing.setPublished('partner', id, false, actorFromPrincipal(principal));
  }

  @ApiPublish('cohort', true)
  @Post('cohorts/:id/publish')
  @HttpCode(200)
  publishCohort(@Param('id') id: string, @CurrentPrincipal() principal?: Principal) {
    return this.publishing.setPublished('cohort', id, true, actorFromPrincipal(principal));
  }

  @ApiPublish('cohort', false)
  @Post('cohorts/:id/unpublish')
  @HttpCode(200)
  unpublishCohort(@Param('id') id: string, @CurrentPrincipal() principal?: Principal) {
    return this.publishing.setPublished('cohort', id, false, actorFromPrincipal(principal));
  }
}
