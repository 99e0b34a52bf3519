import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { groupBy } from '../common/formatting';
import {
  accessionFilter,
  exactFilterConditions,
  idFilter,
  textFilter,
} from '../common/exact-filters.sql';
import type { ExactFilter } from '../common/query-params';
import { SqlParams } from '../common/sql-params';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import type { ContactType } from '../contacts/contact.entity';
import {
  CONTACT_AFFILIATIONS,
  PersonRow,
  toPersonExport,
  USER_PERSON_COLUMNS,
} from '../contacts/contact.exporter';
import { projectVisible } from '../permissions/visibility.sql';
import type { Viewer } from '../permissions/viewer';
import {
  pickProjectFields,
  PROJECT_SCHEMA_URL,
  ProjectExport,
  ProjectField,
  ProjectRow,
  PublicationRow,
  toProjectExport,
} from './project.exporter';

export interface ProjectQuery {
  projectId?: number;
  fields?: ProjectField[];
  /** Values of PROJECT_FILTERS, by parameter name. */
  exact?: Record<string, string | number>;
}

/** The exact filters of `GET /api/projects` (DAISY's project attributes, then record keys). */
export const PROJECT_FILTERS: readonly ExactFilter[] = [
  idFilter('p.id'),
  accessionFilter('p.elu_accession'),
  textFilter(['acronym'], 'p.acronym', 200),
  textFilter(['title', 'name'], 'p.title', 500),
];

type ProjectContactRow = PersonRow & { project_id: number; type: ContactType };
type ProjectUserRow = PersonRow & { project_id: number; kind: 'custodian' | 'personnel' };

@Injectable()
export class ProjectsService {
  constructor(@Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings) {}

  async list(manager: EntityManager, viewer: Viewer, query: ProjectQuery) {
    const params = new SqlParams();
    const conditions = [projectVisible(viewer, params)];
    if (query.projectId !== undefined) conditions.push(`p.id = ${params.add(query.projectId)}`);
    conditions.push(...exactFilterConditions(PROJECT_FILTERS, query.exact ?? {}, params));
    const rows = await manager.query<ProjectRow[]>(
      `SELECT p.id, p.elu_accession, p.acronym, p.title, p.description,
         p.has_institutional_ethics_approval, p.has_national_ethics_approval,
         p.institutional_ethics_approval_notes, p.national_ethics_approval_notes,
         p.start_date::text AS start_date, p.end_date::text AS end_date, p.metadata
       FROM projects p WHERE ${conditions.join(' AND ')} ORDER BY p.id`,
      params.values,
    );
    const projects = await this.export(manager, rows);
    const items =
      query.fields === undefined
        ? projects
        : projects.map((project) => pickProjectFields(project, query.fields ?? []));
    return { $schema: PROJECT_SCHEMA_URL, items };
  }

  /** Maps project rows to the export shape with three more queries, whatever their number. */
  async export(manager: EntityManager, rows: ProjectRow[]): Promise<ProjectExport[]> {
    const ids = rows.map((row) => row.id);
    const contacts = await manager.query<ProjectContactRow[]>(
      `SELECT pc.project_id, ct.first_name, ct.last_name, ct.email, ct.type,
         ${CONTACT_AFFILIATIONS} AS affiliations
       FROM project_contacts pc JOIN contacts ct ON ct.id = pc.contact_id
       WHERE pc.project_id = ANY($1::int[]) ORDER BY ct.last_name, ct.first_name, ct.id`,
      [ids],
    );
    const users = await manager.query<ProjectUserRow[]>(
      `SELECT x.project_id, x.kind, ${USER_PERSON_COLUMNS}
       FROM (SELECT project_id, user_id, 'custodian' AS kind FROM project_local_custodians
             UNION ALL
             SELECT project_id, user_id, 'personnel' AS kind FROM project_company_personnel) x
       JOIN users u ON u.id = x.user_id LEFT JOIN partners ua ON ua.id = u.affiliation_id
       WHERE x.project_id = ANY($1::int[]) ORDER BY u.last_name, u.first_name, u.id`,
      [ids],
    );
    const publications = await manager.query<(PublicationRow & { project_id: number })[]>(
      `SELECT project_id, citation, doi FROM publications
       WHERE project_id = ANY($1::int[]) ORDER BY id`,
      [ids],
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
