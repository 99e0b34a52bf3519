import type { ContactType } from '../contacts/contact.entity';
import type { ImportContext } from './import-context';
import type { ContactInput, PersonInput } from './import-shapes';
import type { References } from './references';

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

/** Partner references made by people's affiliations, for one batched lookup. */
export function affiliationRefs(people: (PersonInput | ContactInput)[] | undefined): string[] {
  return (people ?? []).flatMap((p) =>
    'affiliations' in p
      ? (p.affiliations ?? []).flatMap((a) => (a ? [a] : []))
      : (p.partners ?? []).flatMap((a) => (a.name ? [a.name] : [])),
  );
}

function resolveAffiliations(
  ctx: ImportContext,
  refs: References,
  names: string[] | undefined,
  index: number,
  field: string,
): number[] | undefined {
  if (names === undefined) return undefined;
  return names.flatMap((name, i) => {
    const id = refs.partner(name);
    if (id === undefined) ctx.problem(index, `${field}[${i}]`, `unknown partner "${name}"`);
    return id === undefined ? [] : [id];
  });
}

/** The short person form; `role` defaults to Other. */
export function personFacts(
  ctx: ImportContext,
  refs: References,
  person: PersonInput,
  index: number,
  field: string,
): PersonFacts {
  return {
    firstName: person.first_name ?? '',
    lastName: person.last_name ?? '',
    email: person.email ?? null,
    type: person.role ?? 'Other',
    partnerIds: resolveAffiliations(
      ctx,
      refs,
      person.affiliations?.flatMap((a) => (a ? [a] : [])),
      index,
      `${field}.affiliations`,
    ),
  };
}

/** The full contact form (cohort owners, contract partner contacts). */
export function contactFacts(
  ctx: ImportContext,
  refs: References,
  contact: ContactInput,
  index: number,
  field: string,
): PersonFacts {
  const type: ContactType = contact.type ?? 'Other';
  return {
    firstName: contact.first_name ?? '',
    lastName: contact.last_name ?? '',
    email: contact.email ?? null,
    type,
    oidcId: contact.oidc_id,
    address: contact.address,
    phone: contact.phone,
    partnerIds: resolveAffiliations(
      ctx,
      refs,
      contact.partners?.flatMap((p) => (p.name ? [p.name] : [])),
      index,
      `${field}.partners`,
    ),
  };
}
