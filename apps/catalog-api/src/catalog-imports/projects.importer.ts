import type { ImportContext } from './import-context';
import type { ProjectInput } from './import-shapes';
import { ContactWriter } from './contact-writer';
import { affiliationRefs, personFacts, type PersonFacts } from './person-facts';
import { matchTracked, reportTaken, reserveAccessions, upsertTracked } from './record-matcher';
import { References } from './references';
import { UserAffiliations } from './user-affiliations';

interface ProjectPeople {
  custodians: number[];
  personnel: number[];
  contacts: { facts: PersonFacts; field: string }[];
}

/**
 * Sorts a project's people: a Principal_Investigator whose email belongs to a user is a local
 * custodian, a Researcher who is a user is company personnel (the export lists both so), and
 * everyone else is a contact. The affiliations stated for the users are noted in `affiliations`.
 */
function sortPeople(
  ctx: ImportContext,
  refs: References,
  affiliations: UserAffiliations,
  project: ProjectInput,
  index: number,
): ProjectPeople | undefined {
  if (project.contacts === undefined) return undefined;
  const people: ProjectPeople = { custodians: [], personnel: [], contacts: [] };
  for (const [i, person] of project.contacts.entries()) {
    const userId = refs.userByEmail(person.email);
    const field = `contacts[${i}]`;
    if (userId !== undefined && person.role === 'Principal_Investigator') {
      people.custodians.push(userId);
      affiliations.note(userId, person);
    } else if (userId !== undefined && person.role === 'Researcher') {
      people.personnel.push(userId);
      affiliations.note(userId, person);
    } else {
      people.contacts.push({ facts: personFacts(ctx, refs, person, index, field), field });
    }
  }
  return people;
}

/** Upserts projects by external_id, else acronym; people and publications replaced when given. */
export async function importProjects(ctx: ImportContext, items: ProjectInput[]): Promise<void> {
  const matches = await matchTracked(
    ctx,
    'projects',
    'acronym',
    'acronym',
    'project',
    items.map((p, index) => ({ index, externalId: p.external_id, key: p.acronym ?? '' })),
  );
  await reportTaken(
    ctx,
    'projects',
    'title',
    'name',
    items.map((p, index) => ({ index, value: p.name, ownId: matches[index].id })),
  );
  const refs = await References.load(ctx.manager, ctx.repos, {
    partners: items.flatMap((p) => affiliationRefs(p.contacts)),
    userEmails: items.flatMap((p) => (p.contacts ?? []).flatMap((c) => (c.email ? [c.email] : []))),
  });
  const affiliations = new UserAffiliations(refs);
  const people = items.map((p, index) => sortPeople(ctx, refs, affiliations, p, index));
  items.forEach((p, index) =>
    p.publications?.forEach((pub, i) => {
      if (!pub.citation && !pub.citation_string) {
        ctx.problem(
          index,
          `publications[${i}].citation`,
          'citation or citation_string is required',
        );
      }
    }),
  );
  ctx.throwIfProblems();
  await reserveAccessions(
    ctx,
    items.flatMap((p) => (p.external_id ? [p.external_id] : [])),
  );

  const { manager: m, repos } = ctx;
  await affiliations.write(ctx);
  const contacts = new ContactWriter(ctx);
  const ids = await upsertTracked(ctx, 'projects', items, matches, (p) => ({
    acronym: p.acronym,
    title: p.name,
    description: p.description,
    has_institutional_ethics_approval: p.has_institutional_ethics_approval,
    has_national_ethics_approval: p.has_national_ethics_approval,
    institutional_ethics_approval_notes: p.institutional_ethics_approval_notes,
    national_ethics_approval_notes: p.national_ethics_approval_notes,
    start_date: p.start_date,
    end_date: p.end_date,
    metadata: p.metadata,
  }));
  for (const [index, p] of items.entries()) {
    const match = matches[index];
    const id = ids[index];
    const sorted = people[index];
    if (sorted !== undefined) {
      const contactIds: number[] = [];
      for (const c of sorted.contacts)
        contactIds.push(await contacts.contactId(c.facts, index, c.field));
      await repos.rows.replaceLinks(m, 'project_contacts', 'project_id', 'contact_id', [
        { ownerId: id, otherIds: contactIds },
      ]);
      await repos.rows.replaceLinks(m, 'project_local_custodians', 'project_id', 'user_id', [
        { ownerId: id, otherIds: sorted.custodians },
      ]);
      await repos.rows.replaceLinks(m, 'project_company_personnel', 'project_id', 'user_id', [
        { ownerId: id, otherIds: sorted.personnel },
      ]);
    }
    if (p.publications !== undefined) {
      await repos.projects.replacePublications(
        m,
        id,
        p.publications.map((pub) => ({
          citation: (pub.citation ?? pub.citation_string) as string,
          doi: pub.doi ?? null,
        })),
      );
    }
    ctx.recordWrite('project', id, match.id === null, { ...p });
  }
}
