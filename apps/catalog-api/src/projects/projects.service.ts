import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { groupBy } from '../common/formatting';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { toPersonExport } from '../contacts/contact.exporter';
import type { Viewer } from '../auth/viewer';
import {
  pickProjectFields,
  PROJECT_SCHEMA_URL,
  ProjectExport,
  ProjectField,
  ProjectRow,
  toProjectExport,
} from './project.exporter';
import { ProjectFilter, ProjectsRepository } from './projects.repository';

export interface ProjectQuery extends ProjectFilter {
  fields?: ProjectField[];
}

@Injectable()
export class ProjectsService {
  constructor(
    private readonly projects: ProjectsRepository,
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
  ) {}

  async list(manager: EntityManager, viewer: Viewer, query: ProjectQuery) {
    const rows = await this.projects.findVisible(manager, viewer, query);
    const projects = await this.export(manager, rows);
    const items =
      query.fields === undefined
        ? projects
        : projects.map((project) => pickProjectFields(project, query.fields ?? []));
    return { $schema: PROJECT_SCHEMA_URL, items };
  }

  /** Maps project rows to the export shape with three more queries, whatever their number. */
  async export(manager: EntityManager, rows: ProjectRow[]): Promise<ProjectExport[]> {
    const { contacts, users, publications } = await this.projects.relationsOf(
      manager,
      rows.map((row) => row.id),
    );
    const contactsOf = groupBy(contacts, (row) => row.project_id);
    const usersOf = groupBy(users, (row) => row.project_id);
    const publicationsOf = groupBy(publications, (row) => row.project_id);
    return rows.map((row) => {
      const people = usersOf.get(row.id) ?? [];
      return toProjectExport(
        row,
        {
          contacts: [
            ...(contactsOf.get(row.id) ?? []).map((c) => toPersonExport(c, c.type)),
            ...people
              .filter((u) => u.kind === 'custodian')
              .map((u) => toPersonExport(u, 'Principal_Investigator')),
            ...people
              .filter((u) => u.kind === 'personnel')
              .map((u) => toPersonExport(u, 'Researcher')),
          ],
          publications: publicationsOf.get(row.id) ?? [],
        },
        this.settings.source,
      );
    });
  }
}
