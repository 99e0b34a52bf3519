import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/** Contact columns an import writes; column names are the importer's constants. */
export type ContactValues = Record<string, unknown>;

/** Contacts as the importers write them, in the import's transaction. */
@Injectable()
export class ContactsRepository {
  /**
   * The first contact (by id) with these lower-cased names and lower-cased email (null: one
   * without an email).
   */
  async idByNamesAndEmail(
    manager: EntityManager,
    loweredFirstName: string,
    loweredLastName: string,
    loweredEmail: string | null,
  ): Promise<number | undefined> {
    const rows = await manager.query<{ id: number }[]>(
      `SELECT id FROM contacts
       WHERE lower(first_name) = $1 AND lower(last_name) = $2
         AND (CASE WHEN $3::text IS NULL THEN email IS NULL ELSE lower(email) = $3 END)
       ORDER BY id LIMIT 1`,
      [loweredFirstName, loweredLastName, loweredEmail],
    );
    return rows[0]?.id;
  }

  /** Whether a contact other than `ownId` (null: any contact) has this subject. */
  async otherHasSubject(
    manager: EntityManager,
    oidcId: string,
    ownId: number | null,
  ): Promise<boolean> {
    const holder = await manager.query<{ id: number }[]>(
      `SELECT id FROM contacts WHERE oidc_id = $1 AND id IS DISTINCT FROM $2`,
      [oidcId, ownId],
    );
    return holder.length > 0;
  }

  /** Inserts a contact with these columns; its id. */
  async insert(manager: EntityManager, values: ContactValues): Promise<number> {
    const columns = Object.keys(values);
    const inserted = await manager.query<{ id: number }[]>(
      `INSERT INTO contacts (${columns.join(', ')})
         VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING id`,
      Object.values(values),
    );
    return inserted[0].id;
  }

  /** Sets these columns of the contact. */
  async update(manager: EntityManager, id: number, values: ContactValues): Promise<void> {
    const columns = Object.keys(values);
    await manager.query(
      `UPDATE contacts SET ${columns.map((c, i) => `${c} = $${i + 2}`).join(', ')}, updated_at = now()
         WHERE id = $1`,
      [id, ...Object.values(values)],
    );
  }

  /** The contact's affiliations become exactly these partners. */
  async setPartners(
    manager: EntityManager,
    contactId: number,
    partnerIds: number[],
  ): Promise<void> {
    await manager.query('DELETE FROM contact_partners WHERE contact_id = $1', [contactId]);
    await manager.query(
      `INSERT INTO contact_partners (contact_id, partner_id)
         SELECT $1, unnest($2::int[]) ON CONFLICT DO NOTHING`,
      [contactId, [...new Set(partnerIds)]],
    );
  }
}
