import type { ImportContext } from './import-context';
import type { PersonInput } from './import-shapes';
import type { References } from './references';

/**
 * The affiliations an import states for the people it links to users (custodians, personnel).
 * Such a person is stored as the user, not as a contact, so the name and affiliations given for
 * them would otherwise be dropped; and the export leaves out a person without an affiliation
 * (the ELU schemas require one). A user with no affiliation of their own, as an identity-provider
 * sync creates them, takes the first stated affiliation that names a known partner; a user's
 * own affiliation is never replaced (docs/decisions/import-linked-user-affiliation.md).
 */
export class UserAffiliations {
  private readonly stated = new Map<number, number>();

  constructor(private readonly refs: References) {}

  /** Notes what `person`, linked to the user `userId`, says of their affiliation. */
  note(userId: number, person: PersonInput): void {
    if (this.stated.has(userId)) return;
    for (const name of person.affiliations ?? []) {
      const partnerId = name ? this.refs.partner(name) : undefined;
      if (partnerId !== undefined) {
        this.stated.set(userId, partnerId);
        return;
      }
    }
  }

  /** Gives each noted user without an affiliation the stated one, audited with the import. */
  async write(ctx: ImportContext): Promise<void> {
    const adopted = await ctx.repos.users.adoptAffiliations(ctx.manager, [...this.stated]);
    for (const { id, affiliation_id } of adopted) {
      ctx.recordSideWrite('user', id, { affiliation_id });
    }
  }
}
