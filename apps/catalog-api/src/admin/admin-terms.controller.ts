import { Body, Controller, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CurrentPrincipal, RequireKinds } from '@app/auth';
import type { Principal } from '@app/auth';
import { actorFromPrincipal } from '../audit/audit.service';
import { readString } from '../common/query-params';
import type { RawQuery } from '../common/query-params';
import { VocabularyAdminService } from './vocabulary-admin.service';

/** Loads or refreshes a vocabulary from a text/plain OBO or `term_id<TAB>label` body. */
@Controller('api/admin/terms')
@RequireKinds('global')
export class AdminTermsController {
  constructor(private readonly vocabularies: VocabularyAdminService) {}

  /** `?format=obo|tsv` overrides the detection. */
  @Post(':category')
  @HttpCode(200)
  load(
    @Param('category') category: string,
    @Body() body: unknown,
    @Query() query: RawQuery,
    @CurrentPrincipal() principal?: Principal,
  ) {
    const format = readString(query, 'format');
    return this.vocabularies.load(category, body, format, actorFromPrincipal(principal));
  }
}
