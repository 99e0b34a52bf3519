import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { generateApiKey, hashApiKey } from '@app/auth';
import { ConflictError, NotFoundError, ValidationFailedError } from '@app/errors';
import { AuditActor, AuditService } from '../audit/audit.service';
import { TrackedRecordsRepository } from '../common/tracked-records.repository';
import { References } from '../catalog-imports/references';
import { UsersRepository, UserView } from '../users/users.repository';
import type { CreateUserBody, UpdateUserBody } from './admin-users.dto';

/** Personal keys: 48 characters of [A-Za-z0-9] (about 285 bits). */
export const USER_KEY_LENGTH = 48;

/** Users and their personal keys: a key is shown once, only its SHA-256 is stored. */
@Injectable()
export class UsersAdminService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly users: UsersRepository,
    private readonly tracked: TrackedRecordsRepository,
    private readonly audit: AuditService,
  ) {}

  /**
   * `apiKey` is made at random here unless the caller brings one of its own (the demo data keeps
   * its users' keys in a file, so a restart prints the keys the catalog holds).
   */
  async create(
    input: CreateUserBody,
    actor: AuditActor,
    apiKey = generateApiKey(USER_KEY_LENGTH),
  ): Promise<UserView & { api_key: string }> {
    return this.dataSource.transaction(async (m) => {
      const affiliationId = await this.affiliationId(m, input.affiliation);
      await this.requireFree(m, 'username', input.username ?? '', null);
      if (input.oidc_id) await this.requireFree(m, 'oidc_id', input.oidc_id, null);
      const id = await this.users.insert(m, {
        username: input.username ?? '',
        first_name: input.first_name ?? '',
        last_name: input.last_name ?? '',
        email: input.email ?? '',
        oidc_id: input.oidc_id ?? null,
        api_key_hash: hashApiKey(apiKey),
        affiliation_id: affiliationId ?? null,
      });
      if (input.groups !== undefined) await this.users.setGroups(m, id, input.groups);
      await this.audit.record(m, {
        actor,
        action: 'create',
        objectType: 'user',
        objectId: id,
        change: { ...input },
      });
      return { ...(await this.view(m, id)), api_key: apiKey };
    });
  }

  /** A new key; the old one stops working when this commits. */
  async rotateKey(id: number, actor: AuditActor): Promise<{ api_key: string }> {
    const apiKey = generateApiKey(USER_KEY_LENGTH);
    return this.dataSource.transaction(async (m) => {
      if (!(await this.users.setKeyHash(m, id, hashApiKey(apiKey))))
        throw new NotFoundError(`No user with id ${id}`);
      await this.audit.record(m, { actor, action: 'rotate-key', objectType: 'user', objectId: id });
      return { api_key: apiKey };
    });
  }

  async update(id: number, input: UpdateUserBody, actor: AuditActor): Promise<UserView> {
    return this.dataSource.transaction(async (m) => {
      if (!(await this.users.lock(m, id))) throw new NotFoundError(`No user with id ${id}`);
      const affiliationId = await this.affiliationId(m, input.affiliation);
      if (input.oidc_id) await this.requireFree(m, 'oidc_id', input.oidc_id, id);
      await this.users.update(m, id, {
        is_active: input.is_active,
        oidc_id: input.oidc_id,
        affiliation_id: input.affiliation === undefined ? undefined : (affiliationId ?? null),
      });
      if (input.groups !== undefined) await this.users.setGroups(m, id, input.groups);
      await this.audit.record(m, {
        actor,
        action: 'update',
        objectType: 'user',
        objectId: id,
        change: { ...input },
      });
      return this.view(m, id);
    });
  }

  async view(m: EntityManager, id: number): Promise<UserView> {
    const user = await this.users.view(m, id);
    if (user === undefined) throw new NotFoundError(`No user with id ${id}`);
    return user;
  }

  private async affiliationId(
    m: EntityManager,
    ref: string | null | undefined,
  ): Promise<number | null | undefined> {
    if (ref === undefined || ref === null) return ref;
    const lookups = { tracked: this.tracked, users: this.users };
    const id = (await References.load(m, lookups, { partners: [ref] })).partner(ref);
    if (id === undefined) {
      throw new ValidationFailedError([
        { field: 'affiliation', message: `unknown partner "${ref}"` },
      ]);
    }
    return id;
  }

  private async requireFree(
    m: EntityManager,
    column: 'username' | 'oidc_id',
    value: string,
    ownId: number | null,
  ) {
    if (await this.users.otherHas(m, column, value, ownId))
      throw new ConflictError(`Another user already has this ${column}`, { field: column });
  }
}
