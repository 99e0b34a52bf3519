import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '@app/auth';
import { ApiCachedRead } from '../common/api-docs';
import { CachedJsonResponder } from '../common/cached-json.responder';
import { exactValues } from '../common/query-input';
import { viewerIdentity, viewerOf } from '../permissions/viewer';
import { ProjectsExport, ProjectsQuery } from './projects.dto';
import { PROJECT_FILTERS } from './projects.repository';
import { ProjectQuery, ProjectsService } from './projects.service';

@ApiTags('catalog')
@Controller('api/projects')
export class ProjectsController {
  constructor(
    private readonly projects: ProjectsService,
    private readonly responder: CachedJsonResponder,
  ) {}

  @ApiCachedRead(
    {
      summary: 'Projects visible to the key',
      caller: 'any key',
      description:
        'Global key: all projects; user key: those it holds `protected` on; endpoint key: ' +
        'projects with a dataset exposed to it (active or deprecated), each once.',
    },
    ProjectsExport,
  )
  @Get()
  async list(
    @Query() given: ProjectsQuery,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentPrincipal() principal: Principal | undefined,
  ): Promise<void> {
    const viewer = viewerOf(principal);
    const query: ProjectQuery = {
      projectId: given.project_id,
      fields: given.fields,
      exact: exactValues(given, PROJECT_FILTERS),
    };
    await this.responder.respond(
      req,
      res,
      { route: 'projects', identity: viewerIdentity(principal), params: { ...query } },
      (manager) => this.projects.list(manager, viewer, query),
    );
  }
}
