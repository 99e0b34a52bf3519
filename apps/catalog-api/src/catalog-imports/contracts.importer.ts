import type { ImportContext } from './import-context';
import { fold } from './import-context';
import type { ContractInput } from './import-shapes';
import { ContactWriter } from './contact-writer';
import { affiliationRefs, contactFacts, type PersonFacts } from './person-facts';
import { reportDuplicates } from './record-matcher';
import { References } from './references';
import { UserAffiliations } from './user-affiliations';

interface ResolvedContract {
  projectId: number | undefined;
  custodians: number[] | undefined;
  partners: { partnerId: number; contacts: PersonFacts[] | undefined }[] | undefined;
}

/** Upserts contracts by name within their project (contracts have no accession). */
export async function importContracts(ctx: ImportContext, items: ContractInput[]): Promise<void> {
  const refs = await References.load(ctx.manager, ctx.repos, {
    projects: items.flatMap((c) => (c.project ? [c.project] : [])),
    projectIds: items.flatMap((c) => (c.project_id ? [c.project_id] : [])),
    partners: items.flatMap((c) => [
      ...(c.partners ?? []).flatMap((p) => [p.partner ?? '', ...affiliationRefs(p.contacts)]),
      ...affiliationRefs(c.local_custodians),
    ]),
    userEmails: items.flatMap((c) =>
      (c.local_custodians ?? []).flatMap((p) => (p.email ? [p.email] : [])),
    ),
  });
  const affiliations = new UserAffiliations(refs);
  const resolved = items.map((c, index) => resolve(ctx, refs, affiliations, c, index));
  reportDuplicates(
    ctx,
    items.map((c, index) => ({
      index,
      keys: [{ field: 'name', value: `${resolved[index].projectId ?? '?'}:${c.name ?? ''}` }],
    })),
  );
  const { manager: m, repos } = ctx;
  const existing = await repos.contracts.withProjectAndName(
    m,
    items.map((c, index) => `${resolved[index].projectId ?? 0}:${fold(c.name ?? '')}`),
  );
  ctx.throwIfProblems();
  await affiliations.write(ctx);

  const existingIds = new Map(existing.map((e) => [e.key, e.id]));
  const existingIdOf = (index: number) =>
    existingIds.get(`${resolved[index].projectId}:${fold(items[index].name ?? '')}`) ?? null;
  const ids = await repos.rows.upsert(
    m,
    'contracts',
    items.map((c, index) => ({
      existingId: existingIdOf(index),
      values: { name: c.name, comments: c.comments, project_id: resolved[index].projectId },
    })),
  );

  const contacts = new ContactWriter(ctx);
  for (const [index, c] of items.entries()) {
    const r = resolved[index];
    const existingId = existingIdOf(index);
    const id = ids[index];
    if (r.custodians !== undefined) {
      await repos.rows.replaceLinks(m, 'contract_local_custodians', 'contract_id', 'user_id', [
        { ownerId: id, otherIds: r.custodians },
      ]);
    }
    if (r.partners !== undefined) {
      await repos.contracts.deletePartnerRoles(m, id);
      for (const [i, p] of r.partners.entries()) {
        const input = c.partners?.[i];
        const roleId = await repos.contracts.insertPartnerRole(
          m,
          id,
          p.partnerId,
          [...new Set(input?.partner_roles ?? [])],
          input?.comments ?? null,
        );
        const contactIds: number[] = [];
        for (const [j, facts] of (p.contacts ?? []).entries()) {
          contactIds.push(await contacts.contactId(facts, index, `partners[${i}].contacts[${j}]`));
        }
        await repos.rows.replaceLinks(
          m,
          'contract_partner_role_contacts',
          'contract_partner_role_id',
          'contact_id',
          [{ ownerId: roleId, otherIds: contactIds }],
        );
      }
    }
    ctx.recordWrite('contract', id, existingId === null, { ...c, project_id: r.projectId });
  }
}

function resolve(
  ctx: ImportContext,
  refs: References,
  affiliations: UserAffiliations,
  c: ContractInput,
  index: number,
): ResolvedContract {
  let projectId: number | undefined;
  if (c.project !== undefined) {
    projectId = refs.project(c.project);
    if (projectId === undefined) ctx.problem(index, 'project', `unknown project "${c.project}"`);
  } else if (c.project_id !== undefined) {
    projectId = refs.hasProjectId(c.project_id) ? c.project_id : undefined;
    if (projectId === undefined)
      ctx.problem(index, 'project_id', `no project has id ${c.project_id}`);
  } else {
    ctx.problem(index, 'project_id', 'project_id or project is required');
  }
  const custodians = c.local_custodians?.flatMap((person, i) => {
    const userId = refs.userByEmail(person.email);
    if (userId === undefined) {
      ctx.problem(index, `local_custodians[${i}].email`, 'no user has this email');
      return [];
    }
    affiliations.note(userId, person);
    return [userId];
  });
  const seen = new Set<number>();
  const partners = c.partners?.flatMap((p, i) => {
    const partnerId = refs.partner(p.partner ?? '');
    if (partnerId === undefined) {
      ctx.problem(index, `partners[${i}].partner`, `unknown partner "${p.partner}"`);
      return [];
    }
    if (seen.has(partnerId)) ctx.problem(index, `partners[${i}].partner`, 'is listed twice');
    seen.add(partnerId);
    const contacts = p.contacts?.map((contact, j) =>
      contactFacts(ctx, refs, contact, index, `partners[${i}].contacts[${j}]`),
    );
    return [{ partnerId, contacts }];
  });
  return { projectId, custodians, partners };
}
