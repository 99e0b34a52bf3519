import type { ImportContext } from './import-context';
import type { CohortInput } from './import-shapes';
import { ContactWriter } from './contact-writer';
import { affiliationRefs, contactFacts, type PersonFacts } from './person-facts';
import { matchTracked, reserveAccessions, upsertTracked } from './record-matcher';
import { References } from './references';

/** Upserts cohorts by external_id, else name; owners and institutes are replaced when given. */
export async function importCohorts(ctx: ImportContext, items: CohortInput[]): Promise<void> {
  const matches = await matchTracked(
    ctx,
    'cohorts',
    'name',
    'name',
    'cohort',
    items.map((c, index) => ({ index, externalId: c.external_id, key: c.name ?? '' })),
  );
  const instituteNames = items.flatMap((c) =>
    (c.institutes ?? []).flatMap((i) => (typeof i === 'string' ? [i] : [])),
  );
  const instituteIds = items.flatMap((c) =>
    (c.institutes ?? []).flatMap((i) => (typeof i === 'number' ? [i] : [])),
  );
  const refs = await References.load(ctx.manager, ctx.repos, {
    partners: [...instituteNames, ...items.flatMap((c) => affiliationRefs(c.contacts))],
    partnerIds: instituteIds,
  });

  const resolved = items.map((c, index) => ({
    institutes: c.institutes?.flatMap((ref, i) => {
      const id =
        typeof ref === 'number' ? (refs.hasPartnerId(ref) ? ref : undefined) : refs.partner(ref);
      if (id === undefined)
        ctx.problem(index, `institutes[${i}]`, `unknown partner ${JSON.stringify(ref)}`);
      return id === undefined ? [] : [id];
    }),
    owners: c.contacts?.map((contact, i): PersonFacts =>
      contactFacts(ctx, refs, contact, index, `contacts[${i}]`),
    ),
  }));
  ctx.throwIfProblems();
  await reserveAccessions(
    ctx,
    items.flatMap((c) => (c.external_id ? [c.external_id] : [])),
  );

  const contacts = new ContactWriter(ctx);
  const ids = await upsertTracked(ctx, 'cohorts', items, matches, (c) => ({
    name: c.name,
    description: c.description,
    url: c.url,
    has_ethics_approval: c.has_ethics_approval,
    ethics_approval_notes: c.ethics_approval_notes,
    metadata: c.metadata,
  }));
  for (const [index, c] of items.entries()) {
    const match = matches[index];
    const id = ids[index];
    const { owners, institutes } = resolved[index];
    if (owners !== undefined) {
      const ownerIds: number[] = [];
      for (const [i, owner] of owners.entries()) {
        ownerIds.push(await contacts.contactId(owner, index, `contacts[${i}]`));
      }
      await ctx.repos.rows.replaceLinks(ctx.manager, 'cohort_owners', 'cohort_id', 'contact_id', [
        { ownerId: id, otherIds: ownerIds },
      ]);
    }
    if (institutes !== undefined) {
      await ctx.repos.rows.replaceLinks(
        ctx.manager,
        'cohort_institutes',
        'cohort_id',
        'partner_id',
        [{ ownerId: id, otherIds: institutes }],
      );
    }
    ctx.recordWrite('cohort', id, match.id === null, { ...c });
  }
}
