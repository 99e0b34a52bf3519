import { Controller, Get, Req } from '@nestjs/common';
import type { Request } from 'express';
import type { EntityManager } from 'typeorm';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '@app/auth';
import {
  ApiCachedRead,
  ApiExactFilterQueries,
  ApiFieldsQuery,
  ApiProjectIdQuery,
} from '../common/api-docs';
import { PROJECTS_BODY } from '../common/api-schemas';
import { RawQuery, readExactFilters, readFieldList, readPositiveInt } from '../common/query-params';
import { viewerOf } from '../permissions/viewer';
import { CachedRead, ReadSnapshot } from '../read-cache/cached-read.decorator';
import { PROJECT_FIELDS } from './project.exporter';
import { PROJECT_FILTERS } from './projects.repository';
import { ProjectQuery, ProjectsService } from './projects.service';

@ApiTags('catalog')
@Controller('api/projects')
export class ProjectsController {
  constructor(private readonly projects: ProjectsService) {}

  @ApiCachedRead(
    {
      summary: 'Projects visible to the key',
      caller: 'any key',
      description:
        'Global key: all projects; user key: those it holds `protected` on; endpoint key: ' +
        'projects with a dataset exposed to it (active or deprecated), each once.',
    },
    PROJECTS_BODY,
  )
  @ApiProjectIdQuery()
  @ApiFieldsQuery(PROJECT_FIELDS, '`source` is always kept.')
  @ApiExactFilterQueries(PROJECT_FILTERS)
  @Get()
  @CachedRead()
  list(
    @Req() req: Request,
    @CurrentPrincipal() principal: Principal | undefined,
    @ReadSnapshot() manager: EntityManager,
  ) {
    const viewer = viewerOf(principal);
    const raw = req.query as RawQuery;
    const query: ProjectQuery = {
      projectId: readPositiveInt(raw, 'project_id'),
      fields: readFieldList(raw, 'fields', PROJECT_FIELDS),
      exact: readExactFilters(raw, PROJECT_FILTERS),
    };
    return this.projects.list(manager, viewer, query);
  }
}
