import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { CurrentPrincipal, RequireKinds } from '@app/auth';
import type { Principal } from '@app/auth';
import { actorFromPrincipal } from '../audit/audit.service';
import { CatalogImportService, ImportResult } from './catalog-import.service';

/** `POST /api/<kind>` with `{"items": [...]}` in the export shape (§5); the global key only. */
@Controller('api')
@RequireKinds('global')
export class CatalogImportController {
  constructor(private readonly imports: CatalogImportService) {}

  @Post('partners')
  @HttpCode(200)
  partners(
    @Body() body: unknown,
    @CurrentPrincipal() principal?: Principal,
  ): Promise<ImportResult> {
    return this.imports.import('partners', body, actorFromPrincipal(principal));
  }

  @Post('cohorts')
  @HttpCode(200)
  cohorts(@Body() body: unknown, @CurrentPrincipal() principal?: Principal): Promise<ImportResult> {
    return this.imports.import('cohorts', body, actorFromPrincipal(principal));
  }

  @Post('projects')
  @HttpCode(200)
  projects(
    @Body() body: unknown,
    @CurrentPrincipal() principal?: Principal,
  ): Promise<ImportResult> {
    return this.imports.import('projects', body, actorFromPrincipal(principal));
  }

  @Post('datasets')
  @HttpCode(200)
  datasets(
    @Body() body: unknown,
    @CurrentPrincipal() principal?: Principal,
  ): Promise<ImportResult> {
    return this.imports.import('datasets', body, actorFromPrincipal(principal));
  }

  @Post('contracts')
  @HttpCode(200)
  contracts(
    @Body() body: unknown,
    @CurrentPrincipal() principal?: Principal,
  ): Promise<ImportResult> {
    return this.imports.import('contracts', body, actorFromPrincipal(principal));
  }
}
