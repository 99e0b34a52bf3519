import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { generateApiKey, hashApiKey } from '@app/auth';
import { ConflictError, NotFoundError, ValidationFailedError } from '@app/errors';
import { AuditActor, AuditService } from '../audit/audit.service';
import { References } from '../imports/references';
import { bool, field, list, record, text } from '../imports/shape';
import { parseBody, writeReturning } from './admin-input';

/** Personal keys: 48 characters of [A-Za-z0-9] (about 285 bits). */
export const USER_KEY_LENGTH = 48;

const groupName = text({
  nonEmpty: true,
  max: 150,
  pattern: /^[A-Za-z0-9][A-Za-z0-9._-]*$/,
  patternMessage: 'must be letters, digits, dots, dashes or underscores',
});
const oidcId = field(text({ nullable: true, nonEmpty: true, max: 64 }));
const affiliation = field(text({ nullable: true, nonEmpty: true, max: 255 }));

const createUserShape = record({
  username: field(
    text({
      nonEmpty: true,
      max: 150,
      pattern: /^[A-Za-z0-9._@+-]+$/,
      patternMessage: 'must be letters, digits and . _ @ + -',
    }),
    { required: true },
  ),
  first_name: field(text({ max: 150 }), { required: true }),
  last_name: field(text({ max: 150 }), { required: true }),
  email: field(
    text({ max: 254, pattern: /^[^\s@]+@[^\s@]+$/, patternMessage: 'must be an email address' }),
    { required: true },
  ),
  oidc_id: oidcId,
  groups: field(list(groupName, { max: 50 })),
  /** Extension: the partner (name, acronym or accession) exported as the user's affiliation. */
  affiliation,
});

const updateUserShape = record({
  is_active: field(bool()),
  groups: field(list(groupName, { max: 50 })),
  oidc_id: oidcId,
  affiliation,
});

export interface UserView {
  id: number;
  username: string;
  first_name: string;
  last_name: string;
  email: string | null;
  oidc_id: string | null;
  is_active: boolean;
  groups: string[];
  affiliation: string | null;
}

/** Users and their personal keys: a key is shown once, only its SHA-256 is stored. */
@Injectable()
export class UsersAdminService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly audit: AuditService,
  ) {}

  async create(body: unknown, actor: AuditActor): Promise<UserView & { api_key: string }> {
    const input = parseBody(createUserShape, body);
    const apiKey = generateApiKey(USER_KEY_LENGTH);
    return this.dataSource.transaction(async (m) => {
      const affiliationId = await this.affiliationId(m, input.affiliation);
      await this.requireFree(m, 'username', input.username ?? '', null);
      if (input.oidc_id) await this.requireFree(m, 'oidc_id', input.oidc_id, null);
      const rows = await m.query<{ id: number }[]>(
        `INSERT INTO users (username, first_name, last_name, email, oidc_id, api_key_hash, affiliation_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
        [
          input.username,
          input.first_name,
          input.last_name,
          input.email,
          input.oidc_id ?? null,
          hashApiKey(apiKey),
          affiliationId ?? null,
        ],
      );
      const id = rows[0].id;
      if (input.groups !== undefined) await this.setGroups(m, id, input.groups);
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
      const rows = await writeReturning<{ id: number }>(
        m,
        'UPDATE users SET api_key_hash = $2, updated_at = now() WHERE id = $1 RETURNING id',
        [id, hashApiKey(apiKey)],
      );
      if (rows.length === 0) throw new NotFoundError(`No user with id ${id}`);
      await this.audit.record(m, { actor, action: 'rotate-key', objectType: 'user', objectId: id });
      return { api_key: apiKey };
    });
  }

  async update(id: number, body: unknown, actor: AuditActor): Promise<UserView> {
    const input = parseBody(updateUserShape, body);
    return this.dataSource.transaction(async (m) => {
      const found = await m.query<{ id: number }[]>(
        'SELECT id FROM users WHERE id = $1 FOR UPDATE',
        [id],
      );
      if (found.length === 0) throw new NotFoundError(`No user with id ${id}`);
      const affiliationId = await this.affiliationId(m, input.affiliation);
      if (input.oidc_id) await this.requireFree(m, 'oidc_id', input.oidc_id, id);
      const sets: string[] = [];
      const values: unknown[] = [id];
      const set = (column: string, value: unknown) => {
        values.push(value);
        sets.push(`${column} = $${values.length}`);
      };
      if (input.is_active !== undefined) set('is_active', input.is_active);
      if (input.oidc_id !== undefined) set('oidc_id', input.oidc_id);
      if (input.affiliation !== undefined) set('affiliation_id', affiliationId ?? null);
      if (sets.length > 0) {
        await m.query(
          `UPDATE users SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`,
          values,
        );
      }
      if (input.groups !== undefined) await this.setGroups(m, id, input.groups);
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
    const rows = await m.query<UserView[]>(
      `SELECT u.id, u.username, u.first_name, u.last_name, u.email, u.oidc_id, u.is_active,
         ARRAY(SELECT g.name::text FROM user_groups ug JOIN groups g ON g.id = ug.group_id
               WHERE ug.user_id = u.id ORDER BY g.name) AS groups,
         pa.name AS affiliation
       FROM users u LEFT JOIN partners pa ON pa.id = u.affiliation_id WHERE u.id = $1`,
      [id],
    );
    if (rows.length === 0) throw new NotFoundError(`No user with id ${id}`);
    return rows[0];
  }

  /** Groups are created on first use; the set given replaces the user's groups. */
  private async setGroups(m: EntityManager, userId: number, names: string[]): Promise<void> {
    const unique = [...new Set(names)];
    await m.query(
      `INSERT INTO groups (name) SELECT unnest($1::text[]) ON CONFLICT (name) DO NOTHING`,
      [unique],
    );
    await m.query('DELETE FROM user_groups WHERE user_id = $1', [userId]);
    await m.query(
      `INSERT INTO user_groups (user_id, group_id) SELECT $1, id FROM groups WHERE name = ANY($2::text[])`,
      [userId, unique],
    );
  }

  private async affiliationId(
    m: EntityManager,
    ref: string | null | undefined,
  ): Promise<number | null | undefined> {
    if (ref === undefined || ref === null) return ref;
    const id = (await References.load(m, { partners: [ref] })).partner(ref);
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
    const rows = await m.query<{ id: number }[]>(
      `SELECT id FROM users WHERE ${column} = $1 AND id IS DISTINCT FROM $2`,
      [value, ownId],
    );
    if (rows.length > 0)
      throw new ConflictError(`Another user already has this ${column}`, { field: column });
  }
}
