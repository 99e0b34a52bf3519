import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { NotFoundError, ValidationFailedError } from '@app/errors';
import { AuditActor, AuditService } from '../audit/audit.service';
import type { GrantObjectType } from '../visibility/permission-grant.entity';
import { GrantKey, PermissionGrantsRepository } from '../visibility/permission-grants.repository';
import { UsersRepository } from '../users/users.repository';
import type { GrantBody } from './admin-catalog.dto';

export interface GrantView {
  id: number;
  user: string | null;
  group: string | null;
  permission: string;
  object_type: GrantObjectType;
  object_id: number;
}

/** `protected` grants to users and groups on datasets, projects and contracts. */
@Injectable()
export class GrantsAdminService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly grants: PermissionGrantsRepository,
    private readonly users: UsersRepository,
    private readonly audit: AuditService,
  ) {}

  /** Idempotent: `created` is false when the grant already existed. */
  async grant(
    input: GrantBody,
    actor: AuditActor,
  ): Promise<{ grant: GrantView; created: boolean }> {
    return this.dataSource.transaction(async (m) => {
      const r = await this.resolve(m, input);
      const created = await this.grants.insert(m, r);
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

  async revoke(
    input: GrantBody,
    actor: AuditActor,
  ): Promise<{ status: 'Success'; revoked: number }> {
    return this.dataSource.transaction(async (m) => {
      const r = await this.resolve(m, input);
      const revoked = await this.grants.delete(m, r);
      if (revoked === 0) throw new NotFoundError('No such grant');
      await this.audit.record(m, {
        actor,
        action: 'revoke',
        objectType: input.object_type ?? 'dataset',
        objectId: r.objectId,
        change: { ...input },
      });
      return { status: 'Success' as const, revoked };
    });
  }

  /** The grant the input names, its holder and object looked up. */
  private async resolve(m: EntityManager, input: GrantBody): Promise<GrantKey> {
    const problems: { field: string; message: string }[] = [];
    if ((input.user === undefined) === (input.group === undefined)) {
      problems.push({ field: 'user', message: 'exactly one of user or group is required' });
    }
    let holder: GrantKey['holder'] | undefined;
    if (input.user !== undefined) {
      const id = await this.users.idByUsername(m, input.user);
      if (id === undefined)
        problems.push({ field: 'user', message: `unknown user "${input.user}"` });
      else holder = { column: 'user_id', id };
    } else if (input.group !== undefined) {
      const id = await this.users.groupIdByName(m, input.group);
      if (id === undefined)
        problems.push({ field: 'group', message: `unknown group "${input.group}"` });
      else holder = { column: 'group_id', id };
    }
    const type = input.object_type ?? 'dataset';
    const objectId = await this.grants.objectId(m, type, String(input.object));
    if (objectId === undefined)
      problems.push({
        field: 'object',
        message: `unknown ${type} ${JSON.stringify(input.object)}`,
      });
    if (problems.length > 0 || holder === undefined || objectId === undefined)
      throw new ValidationFailedError(problems);
    return {
      holder,
      permission: input.permission ?? 'protected',
      objectType: type,
      objectId,
    };
  }

  private async view(m: EntityManager, r: GrantKey, input: GrantBody): Promise<GrantView> {
    return {
      id: await this.grants.idOf(m, r),
      user: input.user ?? null,
      group: input.group ?? null,
      permission: input.permission ?? 'protected',
      object_type: input.object_type ?? 'dataset',
      object_id: r.objectId,
    };
  }
}
