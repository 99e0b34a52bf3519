import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { GrantablePermission, GrantObjectType } from './permission-grant.entity';

/** Who holds a grant: the column naming them, and their id. */
export interface GrantHolder {
  column: 'user_id' | 'group_id';
  id: number;
}

/** One grant: a permission on an object, held by a user or a group. */
export interface GrantKey {
  holder: GrantHolder;
  permission: GrantablePermission;
  objectType: GrantObjectType;
  objectId: number;
}

/** How each grantable object is found: by accession or name where it has them, else by id. */
const OBJECT_LOOKUP: Record<GrantObjectType, string> = {
  dataset: `SELECT id FROM datasets WHERE elu_accession = $1 OR title = $1 OR id::text = $1
            ORDER BY (elu_accession = $1) DESC LIMIT 1`,
  project: `SELECT id FROM projects WHERE elu_accession = $1 OR acronym = $1 OR id::text = $1
            ORDER BY (elu_accession = $1) DESC LIMIT 1`,
  contract: `SELECT id FROM contracts WHERE id::text = $1`,
};

/** Object-level grants (`permission_grants`), in the caller's transaction (`manager`). */
@Injectable()
export class PermissionGrantsRepository {
  /** The id of the object of this type that `ref` names (see OBJECT_LOOKUP). */
  async objectId(
    manager: EntityManager,
    type: GrantObjectType,
    ref: string,
  ): Promise<number | undefined> {
    const objects = await manager.query<{ id: number }[]>(OBJECT_LOOKUP[type], [ref]);
    return objects[0]?.id;
  }

  /** Adds the grant unless it exists; whether it was added. */
  async insert(manager: EntityManager, grant: GrantKey): Promise<boolean> {
    const inserted = await manager.query<{ id: number }[]>(
      `INSERT INTO permission_grants (${grant.holder.column}, permission, object_type, object_id)
         VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING id`,
      [grant.holder.id, grant.permission, grant.objectType, grant.objectId],
    );
    return inserted.length > 0;
  }

  /** Removes the grant; how many rows went (0: there was none). */
  async delete(manager: EntityManager, grant: GrantKey): Promise<number> {
    // A CTE: TypeORM answers a bare DELETE ... RETURNING with [rows, count].
    const deleted = await manager.query<{ id: number }[]>(
      `WITH deleted AS (DELETE FROM permission_grants WHERE ${grant.holder.column} = $1
           AND permission = $2 AND object_type = $3 AND object_id = $4 RETURNING id)
       SELECT id FROM deleted`,
      [grant.holder.id, grant.permission, grant.objectType, grant.objectId],
    );
    return deleted.length;
  }

  /** The grant's id. */
  async idOf(manager: EntityManager, grant: GrantKey): Promise<number> {
    const rows = await manager.query<{ id: number }[]>(
      `SELECT id FROM permission_grants WHERE ${grant.holder.column} = $1 AND permission = $2
         AND object_type = $3 AND object_id = $4`,
      [grant.holder.id, grant.permission, grant.objectType, grant.objectId],
    );
    return rows[0].id;
  }
}
