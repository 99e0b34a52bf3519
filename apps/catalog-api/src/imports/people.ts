import type { ContactType } from '../contacts/contact.entity';
import type { ImportContext } from './import-context';
import { fold } from './import-context';

/** A person as an import describes them, references already resolved. */
export interface PersonFacts {
  firstName: string;
  lastName: string;
  email: string | null;
  type: ContactType;
  /** Resolved affiliation partner ids; undefined = leave as stored. */
  partnerIds?: number[];
  oidcId?: string | null;
  address?: string | null;
  phone?: string | null;
}

/**
 * Creates or matches contacts. A contact is the same person when email and both names match
 * (case-insensitive): exports in the wild share placeholder addresses between different
 * people, so the email alone would merge them. A person seen several times in one import is
 * written once, from their first appearance.
 */
export class ContactWriter {
  private readonly seen = new Map<string, number>();

  constructor(private readonly ctx: ImportContext) {}

  async contactId(person: PersonFacts, index: number, field: string): Promise<number> {
    const identity = [person.email ?? '', person.firstName, person.lastName]
      .map(fold)
      .join('\u0000');
    const known = this.seen.get(identity);
    if (known !== undefined) return known;

    const m = this.ctx.manager;
    const rows = await m.query<{ id: number }[]>(
      `SELECT id FROM contacts
       WHERE lower(first_name) = $1 AND lower(last_name) = $2
         AND (CASE WHEN $3::text IS NULL THEN email IS NULL ELSE lower(email) = $3 END)
       ORDER BY id LIMIT 1`,
      [fold(person.firstName), fold(person.lastName), person.email ? fold(person.email) : null],
    );
    let id = rows[0]?.id;
    if (person.oidcId) {
      const holder = await m.query<{ id: number }[]>(
        `SELECT id FROM contacts WHERE oidc_id = $1 AND id IS DISTINCT FROM $2`,
        [person.oidcId, id ?? null],
      );
      if (holder.length > 0) {
        this.ctx.problem(index, `${field}.oidc_id`, 'already belongs to another contact');
      }
    }
    const values = {
      first_name: person.firstName,
      last_name: person.lastName,
      email: person.email,
      type: person.type,
      ...(person.oidcId !== undefined ? { oidc_id: person.oidcId } : {}),
      ...(person.address !== undefined ? { address: person.address } : {}),
      ...(person.phone !== undefined ? { phone: person.phone } : {}),
    };
    if (this.ctx.problems.length > 0) return id ?? 0;
    const columns = Object.keys(values);
    const params = Object.values(values);
    if (id === undefined) {
      const inserted = await m.query<{ id: number }[]>(
        `INSERT INTO contacts (${columns.join(', ')})
         VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING id`,
        params,
      );
      id = inserted[0].id;
    } else {
      await m.query(
        `UPDATE contacts SET ${columns.map((c, i) => `${c} = $${i + 2}`).join(', ')}, updated_at = now()
         WHERE id = $1`,
        [id, ...params],
      );
    }
    if (person.partnerIds !== undefined) {
      await m.query('DELETE FROM contact_partners WHERE contact_id = $1', [id]);
      await m.query(
        `INSERT INTO contact_partners (contact_id, partner_id)
         SELECT $1, unnest($2::int[]) ON CONFLICT DO NOTHING`,
        [id, [...new Set(person.partnerIds)]],
      );
    }
    this.seen.set(identity, id);
    return id;
  }
}
