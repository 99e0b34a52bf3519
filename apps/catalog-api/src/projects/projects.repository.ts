import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  accessionFilter,
  exactFilterConditions,
  idFilter,
  textFilter,
  type ExactFilter,
} from '../common/exact-filters.sql';
import { SqlParams } from '../common/sql-params';
import type { ContactType } from '../contacts/contact.entity';
import { PersonRow } from '../contacts/contact.exporter';
import { CONTACT_AFFILIATIONS, USER_PERSON_COLUMNS } from '../contacts/contact.sql';
import { projectVisible } from '../visibility/visibility.sql';
import type { Viewer } from '../auth/viewer';
import type { ProjectRow, PublicationRow } from './project.exporter';

/** The exact filters of `GET /api/projects` (DAISY's project attributes, then record keys). */
export const PROJECT_FILTERS: readonly ExactFilter[] = [
  idFilter('p.id'),
  accessionFilter('p.elu_accession'),
  textFilter(['acronym'], 'p.acronym', 200),
  textFilter(['title', 'name'], 'p.title', 500),
];

export interface ProjectFilter {
  projectId?: number;
  /** Values of PROJECT_FILTERS, by parameter name. */
  exact?: Record<string, string | number>;
}

export type ProjectContactRow = PersonRow & { project_id: number; type: ContactType };
export type ProjectUserRow = PersonRow & { project_id: number; kind: 'custodian' | 'personnel' };

/** The rows of the people and publications of some projects, each keyed by its project. */
export interface ProjectRelationRows {
  contacts: ProjectContactRow[];
  users: ProjectUserRow[];
  publications: (PublicationRow & { project_id: number })[];
}

/** Projects, their people and publications, in the caller's transaction (`manager`). */
@Injectable()
export class ProjectsRepository {
  /** The projects the viewer may see, narrowed by `filter`, by id. */
  findVisible(
    manager: EntityManager,
    viewer: Viewer,
    filter: ProjectFilter,
  ): Promise<ProjectRow[]> {
    const params = new SqlParams();
    const conditions = [projectVisible(viewer, params)];
    if (filter.projectId !== undefined) conditions.push(`p.id = ${params.add(filter.projectId)}`);
    for (const c of exactFilterConditions(PROJECT_FILTERS, filter.exact ?? {}, params))
      conditions.push(c);
    return manager.query<ProjectRow[]>(
      `SELECT p.id, p.elu_accession, p.acronym, p.title, p.description,
         p.has_institutional_ethics_approval, p.has_national_ethics_approval,
         p.institutional_ethics_approval_notes, p.national_ethics_approval_notes,
         p.start_date::text AS start_date, p.end_date::text AS end_date, p.metadata
       FROM projects p WHERE ${conditions.join(' AND ')} ORDER BY p.id`,
      params.values,
    );
  }

  /** The contacts, users and publications of the projects: three queries, whatever their number. */
  async relationsOf(manager: EntityManager, ids: number[]): Promise<ProjectRelationRows> {
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
    return { contacts, users, publications };
  }

  /** The project's publications become these, in this order (one insert each). */
  async replacePublications(
    manager: EntityManager,
    projectId: number,
    publications: PublicationRow[],
  ): Promise<void> {
    await manager.query('DELETE FROM publications WHERE project_id = $1', [projectId]);
    for (const publication of publications) {
      await manager.query(
        'INSERT INTO publications (project_id, citation, doi) VALUES ($1, $2, $3)',
        [projectId, publication.citation, publication.doi],
      );
    }
  }
}
