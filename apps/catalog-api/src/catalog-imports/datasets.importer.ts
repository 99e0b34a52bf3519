import type { ImportContext } from './import-context';
import { fold } from './import-context';
import type { DatasetInput } from './import-shapes';
import { affiliationRefs } from './person-facts';
import { matchTracked, reportTaken, reserveAccessions, upsertTracked } from './record-matcher';
import { References } from './references';
import { replaceStorages } from './storages-writer';
import { UserAffiliations } from './user-affiliations';

interface ResolvedDataset {
  projectId: number | null | undefined;
  custodians: number[] | undefined;
  /** Per declaration: cohort ids (undefined = not given). */
  cohorts: (number[] | undefined)[];
  transferPartners: (number | null)[];
}

/** Upserts datasets by external_id, else name; each given collection replaces the stored one. */
export async function importDatasets(ctx: ImportContext, items: DatasetInput[]): Promise<void> {
  const matches = await matchTracked(
    ctx,
    'datasets',
    'title',
    'name',
    'dataset',
    items.map((d, index) => ({ index, externalId: d.external_id, key: d.name ?? '' })),
  );
  await reportTaken(
    ctx,
    'datasets',
    'elu_uuid',
    'elu_uuid',
    items.map((d, index) => ({ index, value: d.elu_uuid, ownId: matches[index].id })),
  );
  const refs = await References.load(ctx.manager, ctx.repos, {
    projects: items.flatMap((d) =>
      [d.project_external_id, d.project].flatMap((r) => (r ? [r] : [])),
    ),
    cohorts: items.flatMap((d) =>
      (d.data_declarations ?? []).flatMap((dd) =>
        (dd.cohorts ?? []).flatMap((c) =>
          [c.cohort_external_id, c.cohort].flatMap((r) => (r ? [r] : [])),
        ),
      ),
    ),
    partners: items.flatMap((d) => [
      ...(d.transfers ?? []).flatMap((t) => (t.partner ? [t.partner] : [])),
      ...affiliationRefs(d.contacts),
    ]),
    userEmails: items.flatMap((d) => (d.contacts ?? []).flatMap((c) => (c.email ? [c.email] : []))),
  });
  const affiliations = new UserAffiliations(refs);
  const resolved = items.map((d, index) => resolve(ctx, refs, affiliations, d, index));
  ctx.throwIfProblems();
  await reserveAccessions(
    ctx,
    items.flatMap((d) => (d.external_id ? [d.external_id] : [])),
  );

  await affiliations.write(ctx);
  const ids = await upsertTracked(ctx, 'datasets', items, matches, (d, index) => ({
    title: d.name,
    description: d.description,
    elu_uuid: d.elu_uuid ?? undefined,
    other_external_id: d.other_external_id,
    project_id: resolved[index].projectId,
    metadata: d.metadata,
  }));
  // Each collection a dataset gives replaces the stored one, for all datasets of the document
  // at once: a fixed number of statements per document, not per record.
  const written: WrittenDataset[] = items.map((d, index) => ({
    id: ids[index],
    d,
    r: resolved[index],
  }));
  await ctx.repos.rows.replaceLinks(
    ctx.manager,
    'dataset_local_custodians',
    'dataset_id',
    'user_id',
    written.flatMap(({ id, r }) =>
      r.custodians === undefined ? [] : [{ ownerId: id, otherIds: r.custodians }],
    ),
  );
  await writeDeclarations(ctx, written);
  await writeLegalBases(ctx, written);
  await replaceStorages(
    ctx,
    written.flatMap(({ id, d }) =>
      d.storages === undefined ? [] : [{ datasetId: id, storages: d.storages }],
    ),
  );
  await writeTransfers(ctx, written);
  for (const [index, d] of items.entries()) {
    ctx.recordWrite('dataset', ids[index], matches[index].id === null, { ...d });
  }
}

/** A dataset row written by this import, with its input and resolved references. */
interface WrittenDataset {
  id: number;
  d: DatasetInput;
  r: ResolvedDataset;
}

function resolve(
  ctx: ImportContext,
  refs: References,
  affiliations: UserAffiliations,
  d: DatasetInput,
  index: number,
): ResolvedDataset {
  let projectId: number | null | undefined;
  if (d.project_external_id) {
    projectId = refs.project(d.project_external_id);
    if (projectId === undefined)
      ctx.problem(index, 'project_external_id', `unknown project ${d.project_external_id}`);
    else if (d.project && refs.project(d.project) !== projectId) {
      ctx.problem(index, 'project', 'names another project than project_external_id');
    }
  } else if (d.project) {
    projectId = refs.project(d.project);
    if (projectId === undefined) ctx.problem(index, 'project', `unknown project "${d.project}"`);
  } else if (d.project === null || d.project_external_id === null) {
    projectId = null;
  }
  const cohorts = (d.data_declarations ?? []).map((dd, i) =>
    dd.cohorts?.flatMap((c, j) => {
      const ref = c.cohort_external_id ?? c.cohort;
      const id = ref ? refs.cohort(ref) : undefined;
      if (id === undefined) {
        ctx.problem(
          index,
          `data_declarations[${i}].cohorts[${j}]`,
          `unknown cohort ${JSON.stringify(ref ?? null)}`,
        );
      }
      return id === undefined ? [] : [id];
    }),
  );
  const transferPartners = (d.transfers ?? []).map((t, i) => {
    if (!t.partner) return null;
    const id = refs.partner(t.partner);
    if (id === undefined)
      ctx.problem(index, `transfers[${i}].partner`, `unknown partner "${t.partner}"`);
    return id ?? null;
  });
  // Only people who are users can be custodians; the dataset export lists no one else.
  const custodians = d.contacts?.flatMap((c) => {
    const userId = c.role === 'Principal_Investigator' ? refs.userByEmail(c.email) : undefined;
    if (userId !== undefined) affiliations.note(userId, c);
    return userId === undefined ? [] : [userId];
  });
  return {
    projectId: projectId === undefined ? undefined : projectId,
    custodians,
    cohorts,
    transferPartners,
  };
}

async function writeDeclarations(ctx: ImportContext, written: WrittenDataset[]): Promise<void> {
  const targets = written.filter(({ d }) => d.data_declarations !== undefined);
  if (targets.length === 0) return;
  const { manager: m, repos } = ctx;
  const datasetIds = targets.map((t) => t.id);
  const existing = await repos.datasets.declarationsOf(m, datasetIds);
  const byTitle = new Map(existing.map((e) => [`${e.dataset_id}\u0000${fold(e.title)}`, e.id]));
  const declarations = targets.flatMap((t) =>
    (t.d.data_declarations ?? []).map((dd, i) => ({ t, dd, cohorts: t.r.cohorts[i] })),
  );
  const ids = await repos.rows.upsert(
    m,
    'data_declarations',
    declarations.map(({ t, dd }) => ({
      existingId: byTitle.get(`${t.id}\u0000${fold(dd.title ?? '')}`) ?? null,
      values: {
        dataset_id: t.id,
        title: dd.title,
        data_types: dd.data_types === undefined ? undefined : [...new Set(dd.data_types)],
        data_types_notes: dd.data_types_notes,
        access_category: dd.access_category,
        access_procedure: dd.access_procedure,
        subjects_category: dd.subjects_category ?? 'unknown',
        de_identification: dd.de_identification,
        consent_status: dd.consent_status === 'unknown' ? null : dd.consent_status,
        has_special_subjects: dd.has_special_subjects,
        special_subjects_description: dd.special_subjects_description,
        embargo_date: dd.embargo_date,
        storage_end_date: dd.storage_end_date,
        storage_duration_criteria: dd.storage_duration_criteria,
      },
    })),
  );
  await repos.rows.replaceLinks(
    m,
    'data_declaration_cohorts',
    'data_declaration_id',
    'cohort_id',
    declarations.flatMap(({ cohorts }, k) =>
      cohorts === undefined ? [] : [{ ownerId: ids[k], otherIds: cohorts }],
    ),
  );
  const withConditions = declarations.flatMap(({ dd }, k) =>
    dd.use_conditions === undefined ? [] : [{ id: ids[k], conditions: dd.use_conditions }],
  );
  if (withConditions.length > 0) {
    await repos.datasets.deleteUseConditions(
      m,
      withConditions.map((w) => w.id),
    );
    await repos.rows.insert(
      m,
      'use_conditions',
      withConditions.flatMap(({ id, conditions }) =>
        conditions.map((u) => ({
          data_declaration_id: id,
          use_class: u.use_class,
          use_class_note: u.use_class_note ?? null,
          use_condition_note: u.use_condition_note ?? null,
          use_condition_rule: u.use_condition_rule ?? 'PROHIBITION',
        })),
      ),
    );
  }
  await repos.datasets.deleteDeclarationsExcept(m, datasetIds, ids);
}

async function writeLegalBases(ctx: ImportContext, written: WrittenDataset[]): Promise<void> {
  const targets = written.filter(({ d }) => d.legal_bases !== undefined);
  if (targets.length === 0) return;
  const { manager: m, repos } = ctx;
  await repos.datasets.deleteLegalBases(
    m,
    targets.map((t) => t.id),
  );
  const bases = targets.flatMap((t) => (t.d.legal_bases ?? []).map((lb) => ({ t, lb })));
  const ids = await repos.rows.insert(
    m,
    'legal_bases',
    bases.map(({ t, lb }) => ({
      dataset_id: t.id,
      legal_basis_codes: lb.legal_basis_codes ?? [],
      personal_data_codes: lb.personal_data_codes ?? [],
      legal_basis_notes: lb.legal_basis_notes ?? null,
    })),
  );
  // Each basis names declarations of its own dataset by title.
  const named = bases.flatMap(({ t, lb }, k) =>
    (lb.data_declarations ?? []).map((title) => ({
      basis: ids[k],
      dataset: t.id,
      title: fold(title),
    })),
  );
  if (named.length === 0) return;
  await repos.datasets.linkLegalBases(m, named);
}

async function writeTransfers(ctx: ImportContext, written: WrittenDataset[]): Promise<void> {
  const targets = written.filter(({ d }) => d.transfers !== undefined);
  if (targets.length === 0) return;
  await ctx.repos.datasets.deleteTransfers(
    ctx.manager,
    targets.map((t) => t.id),
  );
  await ctx.repos.rows.insert(
    ctx.manager,
    'transfers',
    targets.flatMap(({ id, d, r }) =>
      (d.transfers ?? []).map((t, i) => ({
        dataset_id: id,
        partner_id: r.transferPartners[i],
        transfer_details: t.transfer_details ?? null,
        transfer_date: t.transfer_date ?? null,
      })),
    ),
  );
}
