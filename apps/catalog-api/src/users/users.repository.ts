import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

/** A user as the administration routes show it. */
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

/** What the user picker shows of an active user. */
export interface PickerUserRow {
  id: number;
  username: string;
  first_name: string;
  last_name: string;
}

/** A new user's columns; the key is stored as its SHA-256 only. */
export interface NewUser {
  username: string;
  first_name: string;
  last_name: string;
  email: string;
  oidc_id: string | null;
  api_key_hash: string;
  affiliation_id: number | null;
}

/** Columns an update may set; undefined ones are left as stored. */
export interface UserChanges {
  is_active?: boolean;
  oidc_id?: string | null;
  affiliation_id?: number | null;
}

/** An account the catalog itself acts as (e.g. the access-request system account). */
export interface SystemAccount {
  username: string;
  firstName: string;
  lastName: string;
}

/** Users, their groups and their keys. Methods with a `manager` run in the caller's transaction. */
@Injectable()
export class UsersRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Active users in picker order (first then last name). */
  listActive(manager: EntityManager): Promise<PickerUserRow[]> {
    return manager.query<PickerUserRow[]>(
      `SELECT id, username, first_name, last_name FROM users WHERE is_active
           ORDER BY first_name, last_name, id`,
    );
  }

  /** The user with exactly this username. */
  async idByUsername(manager: EntityManager, username: string): Promise<number | undefined> {
    const rows = await manager.query<{ id: number }[]>('SELECT id FROM users WHERE username = $1', [
      username,
    ]);
    return rows[0]?.id;
  }

  /** The user's identity-provider subject; undefined when there is no such user. */
  async oidcIdOf(
    userId: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<string | null | undefined> {
    const rows = await manager.query<{ oidc_id: string | null }[]>(
      'SELECT oidc_id FROM users WHERE id = $1',
      [userId],
    );
    return rows[0]?.oidc_id;
  }

  /** Whether the user with this subject is active; undefined when no user has it. */
  async isActiveBySubject(subject: string): Promise<boolean | undefined> {
    const rows = await this.dataSource.query<{ is_active: boolean }[]>(
      'SELECT is_active FROM users WHERE oidc_id = $1',
      [subject],
    );
    return rows[0]?.is_active;
  }

  /**
   * The account's id, creating it (inactive: it cannot hold a key, log in, or appear in the
   * user picker) on first use.
   */
  async systemAccountId(manager: EntityManager, account: SystemAccount): Promise<number> {
    const found = await this.idByUsername(manager, account.username);
    if (found !== undefined) return found;
    await manager.query(
      `INSERT INTO users (username, first_name, last_name, is_active) VALUES ($1, $2, $3, false)
     ON CONFLICT (username) DO NOTHING`,
      [account.username, account.firstName, account.lastName],
    );
    // A separate statement: under READ COMMITTED it sees a row a concurrent request just committed.
    return (await this.idByUsername(manager, account.username)) as number;
  }

  /** Inserts a user; its id. */
  async insert(manager: EntityManager, user: NewUser): Promise<number> {
    const rows = await manager.query<{ id: number }[]>(
      `INSERT INTO users (username, first_name, last_name, email, oidc_id, api_key_hash, affiliation_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
      [
        user.username,
        user.first_name,
        user.last_name,
        user.email,
        user.oidc_id,
        user.api_key_hash,
        user.affiliation_id,
      ],
    );
    return rows[0].id;
  }

  /** Replaces the user's key hash; false when there is no such user. */
  async setKeyHash(manager: EntityManager, id: number, keyHash: string): Promise<boolean> {
    // A CTE: TypeORM answers a bare UPDATE ... RETURNING with [rows, count].
    const rows = await manager.query<{ id: number }[]>(
      `WITH changed AS (UPDATE users SET api_key_hash = $2, updated_at = now() WHERE id = $1
         RETURNING id) SELECT id FROM changed`,
      [id, keyHash],
    );
    return rows.length > 0;
  }

  /** Locks the user's row for the transaction; false when there is no such user. */
  async lock(manager: EntityManager, id: number): Promise<boolean> {
    const found = await manager.query<{ id: number }[]>(
      'SELECT id FROM users WHERE id = $1 FOR UPDATE',
      [id],
    );
    return found.length > 0;
  }

  /** Sets the given columns (one statement, none when nothing is given). */
  async update(manager: EntityManager, id: number, changes: UserChanges): Promise<void> {
    const sets: string[] = [];
    const values: unknown[] = [id];
    for (const [column, value] of Object.entries(changes)) {
      if (value === undefined) continue;
      values.push(value);
      sets.push(`${column} = $${values.length}`);
    }
    if (sets.length === 0) return;
    await manager.query(
      `UPDATE users SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`,
      values,
    );
  }

  /**
   * Sets the affiliation of each user that has none, from `[userId, partnerId]` pairs; a user's
   * own affiliation is kept. Returns the users changed.
   */
  async adoptAffiliations(
    manager: EntityManager,
    pairs: [number, number][],
  ): Promise<{ id: number; affiliation_id: number }[]> {
    if (pairs.length === 0) return [];
    return manager.query(
      // A CTE: TypeORM answers a bare UPDATE ... RETURNING with [rows, count].
      `WITH changed AS (
         UPDATE users u SET affiliation_id = s.partner_id, updated_at = now()
           FROM unnest($1::int[], $2::int[]) AS s(user_id, partner_id)
          WHERE u.id = s.user_id AND u.affiliation_id IS NULL
          RETURNING u.id, u.affiliation_id)
       SELECT id, affiliation_id FROM changed ORDER BY id`,
      [pairs.map(([userId]) => userId), pairs.map(([, partnerId]) => partnerId)],
    );
  }

  /** The user as the administration routes show it: groups by name, affiliation's name. */
  async view(manager: EntityManager, id: number): Promise<UserView | undefined> {
    const rows = await manager.query<UserView[]>(
      `SELECT u.id, u.username, u.first_name, u.last_name, u.email, u.oidc_id, u.is_active,
         ARRAY(SELECT g.name::text FROM user_groups ug JOIN groups g ON g.id = ug.group_id
               WHERE ug.user_id = u.id ORDER BY g.name) AS groups,
         pa.name AS affiliation
       FROM users u LEFT JOIN partners pa ON pa.id = u.affiliation_id WHERE u.id = $1`,
      [id],
    );
    return rows[0];
  }

  /** Groups are created on first use; the names given replace the user's groups. */
  async setGroups(manager: EntityManager, userId: number, names: string[]): Promise<void> {
    const unique = [...new Set(names)];
    await manager.query(
      `INSERT INTO groups (name) SELECT unnest($1::text[]) ON CONFLICT (name) DO NOTHING`,
      [unique],
    );
    await manager.query('DELETE FROM user_groups WHERE user_id = $1', [userId]);
    await manager.query(
      `INSERT INTO user_groups (user_id, group_id) SELECT $1, id FROM groups WHERE name = ANY($2::text[])`,
      [userId, unique],
    );
  }

  /** The group with exactly this name. */
  async groupIdByName(manager: EntityManager, name: string): Promise<number | undefined> {
    const rows = await manager.query<{ id: number }[]>('SELECT id FROM groups WHERE name = $1', [
      name,
    ]);
    return rows[0]?.id;
  }

  /** Whether a user other than `ownId` (null: any user) has this value in the column. */
  async otherHas(
    manager: EntityManager,
    column: 'username' | 'oidc_id',
    value: string,
    ownId: number | null,
  ): Promise<boolean> {
    const rows = await manager.query<{ id: number }[]>(
      `SELECT id FROM users WHERE ${column} = $1 AND id IS DISTINCT FROM $2`,
      [value, ownId],
    );
    return rows.length > 0;
  }

  /** Users whose email, lower-cased, is one of `loweredEmails`; `email` comes back lower-cased. */
  withEmails(
    manager: EntityManager,
    loweredEmails: string[],
  ): Promise<{ id: number; email: string }[]> {
    return manager.query<{ id: number; email: string }[]>(
      `SELECT id, lower(email) AS email FROM users WHERE lower(email) = ANY($1::text[])`,
      [loweredEmails],
    );
  }
}
