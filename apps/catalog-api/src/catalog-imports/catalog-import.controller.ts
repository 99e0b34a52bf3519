import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireKinds } from '@app/auth';
import type { Principal } from '@app/auth';
import { actorFromPrincipal } from '../audit/audit.service';
import { ApiCall } from '../common/api-docs';
import { ImportAnswer } from '../common/response-properties';
import { CatalogImportService, ImportResult } from './catalog-import.service';
import { IMPORT_DOCUMENTS } from './catalog-import.dto';
import type { ImportKind } from './import-shapes';

/** The same description for each kind: only the record shape and natural key differ. */
const ApiImport = (kind: ImportKind, naturalKey: string) =>
  ApiCall({
    summary: `Create or update ${kind} from an export-shaped document`,
    caller: 'global key only',
    description:
      `Upserts each item by \`external_id\`, else by ${naturalKey}, in one transaction; ` +
      'references are resolved by name or accession (a missing one is a 400). The whole ' +
      'body is validated first: a 400 lists every problem and nothing is written.',
    body: IMPORT_DOCUMENTS[kind],
    responses: [{ status: 200, description: 'Imported', body: ImportAnswer }],
    errors: [409],
  });

/** `POST /api/<kind>` with `{"items": [...]}` in the export shape (§5); the global key only. */
@ApiTags('imports')
@Controller('api')
@RequireKinds('global')
export class CatalogImportController {
  constructor(private readonly imports: CatalogImportService) {}

  @ApiImport('partners', 'name')
  @Post('partners')
  @HttpCode(200)
  partners(
    @Body() body: unknown,
    @CurrentPrincipal() principal?: Principal,
  ): Promise<ImportResult> {
    return this.imports.import('partners', body, actorFromPrincipal(principal));
  }

  @ApiImport('cohorts', 'name')
  @Post('cohorts')
  @HttpCode(200)
  cohorts(@Body() body: unknown, @CurrentPrincipal() principal?: Principal): Promise<ImportResult> {
    return this.imports.import('cohorts', body, actorFromPrincipal(principal));
  }

  @ApiImport('projects', 'acronym')
  @Post('projects')
  @HttpCode(200)
  projects(
    @Body() body: unknown,
    @CurrentPrincipal() principal?: Principal,
  ): Promise<ImportResult> {
    return this.imports.import('projects', body, actorFromPrincipal(principal));
  }

  @ApiImport('datasets', 'name')
  @Post('datasets')
  @HttpCode(200)
  datasets(
    @Body() body: unknown,
    @CurrentPrincipal() principal?: Principal,
  ): Promise<ImportResult> {
    return this.imports.import('datasets', body, actorFromPrincipal(principal));
  }

  @ApiImport('contracts', 'name and project')
  @Post('contracts')
  @HttpCode(200)
  contracts(
    @Body() body: unknown,
    @CurrentPrincipal() principal?: Principal,
  ): Promise<ImportResult> {
    return this.imports.import('contracts', body, actorFromPrincipal(principal));
  }
}
