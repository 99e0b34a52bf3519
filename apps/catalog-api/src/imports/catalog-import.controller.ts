import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger';
import { CurrentPrincipal, RequireKinds } from '@app/auth';
import type { Principal } from '@app/auth';
import { actorFromPrincipal } from '../audit/audit.service';
import { ApiCall } from '../common/api-docs';
import {
  asInput,
  COHORT_SCHEMA,
  CONTRACT_SCHEMA,
  DATASET_SCHEMA,
  itemsBody,
  PARTNER_SCHEMA,
  PROJECT_SCHEMA,
  successCounts,
} from '../common/api-schemas';
import { CatalogImportService, ImportResult } from './catalog-import.service';
import type { ImportKind } from './import-shapes';

/** The same description for each kind: only the record shape and natural key differ. */
const ApiImport = (kind: ImportKind, item: SchemaObject, naturalKey: string) =>
  ApiCall({
    summary: `Create or update ${kind} from an export-shaped document`,
    caller: 'global key only',
    description:
      `Upserts each item by \`external_id\`, else by ${naturalKey}, in one transaction; ` +
      'references are resolved by name or accession (a missing one is a 400). The whole ' +
      'body is validated first: a 400 lists every problem and nothing is written.',
    body: itemsBody(
      asInput(
        item,
        `The export shape; \`source\`, \`id_at_source\` and exposure fields are ignored`,
      ),
    ),
    responses: [
      { status: 200, description: 'Imported', schema: successCounts('created', 'updated') },
    ],
    errors: [409],
  });

/** `POST /api/<kind>` with `{"items": [...]}` in the export shape (§5); the global key only. */
@ApiTags('imports')
@Controller('api')
@RequireKinds('global')
export class CatalogImportController {
  constructor(private readonly imports: CatalogImportService) {}

  @ApiImport('partners', PARTNER_SCHEMA, 'name')
  @Post('partners')
  @HttpCode(200)
  partners(
    @Body() body: unknown,
    @CurrentPrincipal() principal?: Principal,
  ): Promise<ImportResult> {
    return this.imports.import('partners', body, actorFromPrincipal(principal));
  }

  @ApiImport('cohorts', COHORT_SCHEMA, 'name')
  @Post('cohorts')
  @HttpCode(200)
  cohorts(@Body() body: unknown, @CurrentPrincipal() principal?: Principal): Promise<ImportResult> {
    return this.imports.import('cohorts', body, actorFromPrincipal(principal));
  }

  @ApiImport('projects', PROJECT_SCHEMA, 'acronym')
  @Post('projects')
  @HttpCode(200)
  projects(
    @Body() body: unknown,
    @CurrentPrincipal() principal?: Principal,
  ): Promise<ImportResult> {
    return this.imports.import('projects', body, actorFromPrincipal(principal));
  }

  @ApiImport('datasets', DATASET_SCHEMA, 'name')
  @Post('datasets')
  @HttpCode(200)
  datasets(
    @Body() body: unknown,
    @CurrentPrincipal() principal?: Principal,
  ): Promise<ImportResult> {
    return this.imports.import('datasets', body, actorFromPrincipal(principal));
  }

  @ApiImport('contracts', CONTRACT_SCHEMA, 'name and project')
  @Post('contracts')
  @HttpCode(200)
  contracts(
    @Body() body: unknown,
    @CurrentPrincipal() principal?: Principal,
  ): Promise<ImportResult> {
    return this.imports.import('contracts', body, actorFromPrincipal(principal));
  }
}
