import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { NotFoundError, ValidationFailedError } from '@app/errors';
import { AuditActor, AuditService } from '../audit/audit.service';
import {
  GRANT_OBJECT_TYPES,
  GRANTABLE_PERMISSIONS,
  GrantObjectType,
} from '../permissions/permission-grant.entity';
import { field, idOrName, oneOf, record, text } from '../imports/shape';
import { parseBody, writeReturning } from './admin-input';

const grantShape = record({
  user: field(text({ nonEmpty: true, max: 150 })),
  group: field(text({ nonEmpty: true, max: 150 })),
  permission: field(oneOf(GRANTABLE_PERMISSIONS), { required: true }),
  object_type: field(oneOf(GRANT_OBJECT_TYPES), { required: true }),
  object: field(idOrName(), { required: true }),
});
type GrantInput = NonNullable<ReturnType<typeof grantShape.parse>>;

export interface GrantView {
  id: number;
  user: string | null;
  group: string | null;
  permission: string;
  object_type: GrantObjectType;
  object_id: number;
}

interface Resolved {
  holder: { column: 'user_id' | 'group_id'; id: number };
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

/** `protected` grants to users and groups on datasets, projects and contracts. */
@Injectable()
export class GrantsAdminService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly audit: AuditService,
  ) {}

  /** Idempotent: `created` is false when the grant already existed. */
  async grant(body: unknown, actor: AuditActor): Promise<{ grant: GrantView; created: boolean }> {
    const input = parseBody(grantShape, body);
    return this.dataSource.transaction(async (m) => {
      const r = await this.resolve(m, input);
      const inserted = await m.query<{ id: number }[]>(
        `INSERT INTO permission_grants (${r.holder.column}, permission, object_type, object_id)
         VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING id`,
        [r.holder.id, input.permission, input.object_type, r.objectId],
      );
      const created = inserted.length > 0;
      if (created) {
        await this.audit.record(m, {
          actor,
          action: 'grant',
          objectType: input.object_type ?? 'dataset',
          objectId: r.objectId,
          change: { ...input },
        });
      }
      return { grant: await this.view(m, r, input), created };
    });
  }

  async revoke(body: unknown, actor: AuditActor): Promise<{ status: 'Success'; revoked: number }> {
    const input = parseBody(grantShape, body);
    return this.dataSource.transaction(async (m) => {
      const r = await this.resolve(m, input);
      const deleted = await writeReturning<{ id: number }>(
        m,
        `DELETE FROM permission_grants WHERE ${r.holder.column} = $1 AND permission = $2
           AND object_type = $3 AND object_id = $4 RETURNING id`,
        [r.holder.id, input.permission, input.object_type, r.objectId],
      );
      if (deleted.length === 0) throw new NotFoundError('No such grant');
      await this.audit.record(m, {
        actor,
        action: 'revoke',
        objectType: input.object_type ?? 'dataset',
        objectId: r.objectId,
        change: { ...input },
      });
      return { status: 'Success' as const, revoked: deleted.length };
    });
  }

  private async resolve(m: EntityManager, input: GrantInput): Promise<Resolved> {
    const problems: { field: string; message: string }[] = [];
    if ((input.user === undefined) === (input.group === undefined)) {
      problems.push({ field: 'user', message: 'exactly one of user or group is required' });
    }
    let holder: Resolved['holder'] | undefined;
    if (input.user !== undefined) {
      const rows = await m.query<{ id: number }[]>('SELECT id FROM users WHERE username = $1', [
        input.user,
      ]);
      if (rows.length === 0)
        problems.push({ field: 'user', message: `unknown user "${input.user}"` });
      else holder = { column: 'user_id', id: rows[0].id };
    } else if (input.group !== undefined) {
      const rows = await m.query<{ id: number }[]>('SELECT id FROM groups WHERE name = $1', [
        input.group,
      ]);
      if (rows.length === 0)
        problems.push({ field: 'group', message: `unknown group "${input.group}"` });
      else holder = { column: 'group_id', id: rows[0].id };
    }
    const type = input.object_type ?? 'dataset';
    const objects = await m.query<{ id: number }[]>(OBJECT_LOOKUP[type], [String(input.object)]);
    if (objects.length === 0)
      problems.push({
        field: 'object',
        message: `unknown ${type} ${JSON.stringify(input.object)}`,
      });
    if (problems.length > 0 || holder === undefined) throw new ValidationFailedError(problems);
    return { holder, objectId: objects[0].id };
  }

  private async view(m: EntityManager, r: Resolved, input: GrantInput): Promise<GrantView> {
    const rows = await m.query<{ id: number }[]>(
      `SELECT id FROM permission_grants WHERE ${r.holder.column} = $1 AND permission = $2
         AND object_type = $3 AND object_id = $4`,
      [r.holder.id, input.permission, input.object_type, r.objectId],
    );
    return {
      id: rows[0].id,
      user: input.user ?? null,
      group: input.group ?? null,
      permission: input.permission ?? 'protected',
      object_type: input.object_type ?? 'dataset',
      object_id: r.objectId,
    };
  }
}
