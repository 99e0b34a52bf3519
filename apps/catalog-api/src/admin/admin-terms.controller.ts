import { Body, Controller, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiConsumes, ApiParam, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireKinds } from '@app/auth';
import type { Principal } from '@app/auth';
import { actorFromPrincipal } from '../audit/audit.service';
import { ApiCall, ApiError } from '../common/api-docs';
import { TERM_CATEGORIES } from '../terms/term-category';
import { VocabularyLoaded } from './admin-responses.dto';
import { VocabularyLoadQuery } from './admin-terms.dto';
import { VocabularyAdminService } from './vocabulary-admin.service';

/** Loads or refreshes a vocabulary from a text/plain OBO or `term_id<TAB>label` body. */
@ApiTags('admin')
@Controller('api/admin/terms')
@RequireKinds('global')
export class AdminTermsController {
  constructor(private readonly vocabularies: VocabularyAdminService) {}

  /** `?format=obo|tsv` overrides the detection. */
  @ApiCall({
    summary: 'Load or refresh a term vocabulary',
    caller: 'global key only',
    // A text body: no DTO class describes it.
    body: {
      type: 'string',
      description: 'An OBO file, or `term_id<TAB>label` lines',
      example: 'DOID:14330\tParkinson disease\n',
    },
    responses: [{ status: 200, description: 'Counts of the load', body: VocabularyLoaded }],
    errors: [404],
  })
  @ApiConsumes('text/plain')
  // The shared 415 says "not JSON"; this route wants text.
  @ApiError(415, 'The body is not text/plain')
  @ApiParam({
    name: 'category',
    description: 'The vocabulary; any other is a 404',
    enum: [...TERM_CATEGORIES],
  })
  @Post(':category')
  @HttpCode(200)
  load(
    @Param('category') category: string,
    @Body() body: unknown,
    @Query() { format }: VocabularyLoadQuery,
    @CurrentPrincipal() principal?: Principal,
  ) {
    return this.vocabularies.load(category, body, format, actorFromPrincipal(principal));
  }
}
