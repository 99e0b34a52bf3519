import type { SqlParams } from '../common/sql-params';
import { GLOBAL_PROTECTED_GROUPS } from '../users/group.entity';
import type { GrantObjectType } from './permission-grant.entity';
import type { Viewer } from '../auth/viewer';

/**
 * SQL predicates deciding what a viewer sees. `protected` on an object: the user is in a
 * global group (data-steward, auditor), is a local custodian of it, or was granted it directly
 * or through a group. Datasets and contracts also inherit `protected` from their project.
 * Fragments, not a repository: the projects, datasets and contracts repositories AND them into
 * their own statements, so one visibility rule serves all three and runs no query of its own.
 */

function inGlobalGroup(user: string, params: SqlParams): string {
  return `EXISTS (SELECT 1 FROM user_groups ug JOIN groups gr ON gr.id = ug.group_id
    WHERE ug.user_id = ${user} AND gr.name = ANY(${params.add([...GLOBAL_PROTECTED_GROUPS])}::text[]))`;
}

function granted(type: GrantObjectType, idExpr: string, user: string): string {
  return `EXISTS (SELECT 1 FROM permission_grants pg
    WHERE pg.permission = 'protected' AND pg.object_type = '${type}' AND pg.object_id = ${idExpr}
      AND (pg.user_id = ${user}
        OR pg.group_id IN (SELECT ug.group_id FROM user_groups ug WHERE ug.user_id = ${user})))`;
}

function custodian(table: string, column: string, idExpr: string, user: string): string {
  return `EXISTS (SELECT 1 FROM ${table} lc WHERE lc.${column} = ${idExpr} AND lc.user_id = ${user})`;
}

function projectProtected(projectIdExpr: string, user: string): string {
  return `(${custodian('project_local_custodians', 'project_id', projectIdExpr, user)}
    OR ${granted('project', projectIdExpr, user)})`;
}

/** Predicate on a `projects` row aliased `p`. */
export function projectVisible(viewer: Viewer, params: SqlParams): string {
  switch (viewer.kind) {
    case 'global':
      return 'TRUE';
    case 'user': {
      const user = params.add(viewer.userId);
      return `(${inGlobalGroup(user, params)} OR ${projectProtected('p.id', user)})`;
    }
    case 'endpoint':
      return `EXISTS (SELECT 1 FROM datasets vd JOIN exposures ve ON ve.dataset_id = vd.id
        WHERE vd.project_id = p.id AND ve.endpoint_id = ${params.add(viewer.endpointId)})`;
  }
}

/** Predicate on a `datasets` row aliased `d`. */
export function datasetVisible(viewer: Viewer, params: SqlParams): string {
  switch (viewer.kind) {
    case 'global':
      return 'TRUE';
    case 'user': {
      const user = params.add(viewer.userId);
      return `(${inGlobalGroup(user, params)}
        OR ${custodian('dataset_local_custodians', 'dataset_id', 'd.id', user)}
        OR ${granted('dataset', 'd.id', user)}
        OR (d.project_id IS NOT NULL AND ${projectProtected('d.project_id', user)}))`;
    }
    case 'endpoint':
      return `EXISTS (SELECT 1 FROM exposures ve
        WHERE ve.dataset_id = d.id AND ve.endpoint_id = ${params.add(viewer.endpointId)})`;
  }
}

/**
 * Predicate on a `contracts` row aliased `c`: its project must have a dataset with an exposure
 * (active or deprecated); for an endpoint, an exposure to that endpoint; for a user, the
 * contract must also be protected for them.
 */
export function contractVisible(viewer: Viewer, params: SqlParams): string {
  const endpointFilter =
    viewer.kind === 'endpoint' ? `AND ve.endpoint_id = ${params.add(viewer.endpointId)}` : '';
  const exposed = `c.project_id IS NOT NULL AND EXISTS (SELECT 1 FROM datasets vd
    JOIN exposures ve ON ve.dataset_id = vd.id WHERE vd.project_id = c.project_id ${endpointFilter})`;
  if (viewer.kind !== 'user') return `(${exposed})`;
  const user = params.add(viewer.userId);
  return `(${exposed} AND (${inGlobalGroup(user, params)}
    OR ${custodian('contract_local_custodians', 'contract_id', 'c.id', user)}
    OR ${granted('contract', 'c.id', user)}
    OR ${projectProtected('c.project_id', user)}))`;
}
