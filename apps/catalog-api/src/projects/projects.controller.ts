import { Controller, Get, Query } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '@app/auth';
import { ApiCachedRead } from '../common/api-docs';
import { exactValues } from '../common/query-input';
import { viewerOf } from '../auth/viewer';
import { CachedRead, ReadSnapshot } from '../read-cache/cached-read.decorator';
import { ProjectsExport, ProjectsQuery } from './projects.dto';
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
    ProjectsExport,
  )
  @Get()
  @CachedRead()
  list(
    @Query() given: ProjectsQuery,
    @CurrentPrincipal() principal: Principal | undefined,
    @ReadSnapshot() manager: EntityManager,
  ) {
    const viewer = viewerOf(principal);
    const query: ProjectQuery = {
      projectId: given.project_id,
      fields: given.fields,
      exact: exactValues(given, PROJECT_FILTERS),
    };
    return this.projects.list(manager, viewer, query);
  }
}
