import type { ImportContext } from './import-context';
import { fold } from './import-context';
import type { PersonFacts } from './person-facts';

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
    const contacts = this.ctx.repos.contacts;
    let id = await contacts.idByNamesAndEmail(
      m,
      fold(person.firstName),
      fold(person.lastName),
      person.email ? fold(person.email) : null,
    );
    if (person.oidcId && (await contacts.otherHasSubject(m, person.oidcId, id ?? null))) {
      this.ctx.problem(index, `${field}.oidc_id`, 'already belongs to another contact');
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
    if (this.ctx.problems.count > 0) return id ?? 0;
    if (id === undefined) id = await contacts.insert(m, values);
    else await contacts.update(m, id, values);
    if (person.partnerIds !== undefined) await contacts.setPartners(m, id, person.partnerIds);
    this.seen.set(identity, id);
    return id;
  }
}
