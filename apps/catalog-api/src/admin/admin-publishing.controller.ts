import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { CurrentPrincipal, RequireKinds } from '@app/auth';
import type { Principal } from '@app/auth';
import { actorFromPrincipal } from '../audit/audit.service';
import { PublishingService } from './publishing.service';

/** `POST /api/admin/{partners|cohorts}/{id or accession}/{publish|unpublish}`. */
@Controller('api/admin')
@RequireKinds('global')
export class AdminPublishingController {
  constructor(private readonly publishing: PublishingService) {}

  @Post('partners/:id/publish')
  @HttpCode(200)
  publishPartner(@Param('id') id: string, @CurrentPrincipal() principal?: Principal) {
    return this.publishing.setPublished('partner', id, true, actorFromPrincipal(principal));
  }

  @Post('partners/:id/unpublish')
  @HttpCode(200)
  unpublishPartner(@Param('id') id: string, @CurrentPrincipal() principal?: Principal) {
    return this.publishing.setPublished('partner', id, false, actorFromPrincipal(principal));
  }

  @Post('cohorts/:id/publish')
  @HttpCode(200)
  publishCohort(@Param('id') id: string, @CurrentPrincipal() principal?: Principal) {
    return this.publishing.setPublished('cohort', id, true, actorFromPrincipal(principal));
  }

  @Post('cohorts/:id/unpublish')
  @HttpCode(200)
  unpublishCohort(@Param('id') id: string, @CurrentPrincipal() principal?: Principal) {
    return this.publishing.setPublished('cohort', id, false, actorFromPrincipal(principal));
  }
}
