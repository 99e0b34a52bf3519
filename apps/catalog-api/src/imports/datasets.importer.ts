import type { ImportContext } from './import-context';
import { fold } from './import-context';
import type { DatasetInput, DeclarationInput } from './import-shapes';
import { matchTracked, reserveAccessions } from './record-matcher';
import { References } from './references';
import { replaceLinks, reportTaken, upsertRow } from './row-writer';
import { replaceStorages } from './storages.writer';

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
  const refs = await References.load(ctx.manager, {
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
    partners: items.flatMap((d) =>
      (d.transfers ?? []).flatMap((t) => (t.partner ? [t.partner] : [])),
    ),
    userEmails: items.flatMap((d) => (d.contacts ?? []).flatMap((c) => (c.email ? [c.email] : []))),
  });
  const resolved = items.map((d, index) => resolve(ctx, refs, d, index));
  ctx.throwIfProblems();
  await reserveAccessions(
    ctx,
    items.flatMap((d) => (d.external_id ? [d.external_id] : [])),
  );

  for (const [index, d] of items.entries()) {
    const match = matches[index];
    const r = resolved[index];
    const id = await upsertRow(
      ctx,
      'datasets',
      match.id,
      {
        title: d.name,
        description: d.description,
        elu_uuid: d.elu_uuid ?? undefined,
        other_external_id: d.other_external_id,
        project_id: r.projectId,
        metadata: d.metadata,
      },
      d.external_id,
    );
    if (r.custodians !== undefined) {
      await replaceLinks(
        ctx,
        'dataset_local_custodians',
        'dataset_id',
        id,
        'user_id',
        r.custodians,
      );
    }
    if (d.data_declarations !== undefined) await writeDeclarations(ctx, id, d.data_declarations, r);
    if (d.legal_bases !== undefined) await writeLegalBases(ctx, id, d);
    if (d.storages !== undefined) await replaceStorages(ctx, id, d.storages);
    if (d.transfers !== undefined) {
      await ctx.manager.query('DELETE FROM transfers WHERE dataset_id = $1', [id]);
      for (const [i, t] of d.transfers.entries()) {
        await ctx.manager.query(
          `INSERT INTO transfers (dataset_id, partner_id, transfer_details, transfer_date)
           VALUES ($1, $2, $3, $4)`,
          [id, r.transferPartners[i], t.transfer_details ?? null, t.transfer_date ?? null],
        );
      }
    }
    ctx.recordWrite('dataset', id, match.id === null, { ...d });
  }
}

function resolve(
  ctx: ImportContext,
  refs: References,
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
    return userId === undefined ? [] : [userId];
  });
  return {
    projectId: projectId === undefined ? undefined : projectId,
    custodians,
    cohorts,
    transferPartners,
  };
}

async function writeDeclarations(
  ctx: ImportContext,
  datasetId: number,
  declarations: DeclarationInput[],
  r: ResolvedDataset,
): Promise<void> {
  const m = ctx.manager;
  const existing = await m.query<{ id: number; title: string }[]>(
    'SELECT id, title FROM data_declarations WHERE dataset_id = $1',
    [datasetId],
  );
  const byTitle = new Map(existing.map((e) => [fold(e.title), e.id]));
  const kept: number[] = [];
  for (const [i, dd] of declarations.entries()) {
    const consent = dd.consent_status === 'unknown' ? null : dd.consent_status;
    const id = await upsertRow(
      ctx,
      'data_declarations',
      byTitle.get(fold(dd.title ?? '')) ?? null,
      {
        dataset_id: datasetId,
        title: dd.title,
        data_types: dd.data_types === undefined ? undefined : [...new Set(dd.data_types)],
        data_types_notes: dd.data_types_notes,
        access_category: dd.access_category,
        access_procedure: dd.access_procedure,
        subjects_category: dd.subjects_category ?? 'unknown',
        de_identification: dd.de_identification,
        consent_status: consent,
        has_special_subjects: dd.has_special_subjects,
        special_subjects_description: dd.special_subjects_description,
        embargo_date: dd.embargo_date,
        storage_end_date: dd.storage_end_date,
        storage_duration_criteria: dd.storage_duration_criteria,
      },
    );
    kept.push(id);
    const cohorts = r.cohorts[i];
    if (cohorts !== undefined) {
      await replaceLinks(
        ctx,
        'data_declaration_cohorts',
        'data_declaration_id',
        id,
        'cohort_id',
        cohorts,
      );
    }
    if (dd.use_conditions !== undefined) {
      await m.query('DELETE FROM use_conditions WHERE data_declaration_id = $1', [id]);
      for (const u of dd.use_conditions) {
        await m.query(
          `INSERT INTO use_conditions
             (data_declaration_id, use_class, use_class_note, use_condition_note, use_condition_rule)
           VALUES ($1, $2, $3, $4, $5)`,
          [
            id,
            u.use_class,
            u.use_class_note ?? null,
            u.use_condition_note ?? null,
            u.use_condition_rule ?? 'PROHIBITION',
          ],
        );
      }
    }
  }
  await m.query(
    'DELETE FROM data_declarations WHERE dataset_id = $1 AND NOT (id = ANY($2::int[]))',
    [datasetId, kept],
  );
}

async function writeLegalBases(
  ctx: ImportContext,
  datasetId: number,
  d: DatasetInput,
): Promise<void> {
  const m = ctx.manager;
  await m.query('DELETE FROM legal_bases WHERE dataset_id = $1', [datasetId]);
  for (const lb of d.legal_bases ?? []) {
    const rows = await m.query<{ id: number }[]>(
      `INSERT INTO legal_bases (dataset_id, legal_basis_codes, personal_data_codes, legal_basis_notes)
       VALUES ($1, $2::text[]::legal_basis_code[], $3::text[]::personal_data_code[], $4) RETURNING id`,
      [
        datasetId,
        lb.legal_basis_codes ?? [],
        lb.personal_data_codes ?? [],
        lb.legal_basis_notes ?? null,
      ],
    );
    const titles = (lb.data_declarations ?? []).map(fold);
    if (titles.length > 0) {
      await m.query(
        `INSERT INTO legal_basis_data_declarations (legal_basis_id, data_declaration_id)
         SELECT $1, id FROM data_declarations WHERE dataset_id = $2 AND lower(title) = ANY($3::text[])
         ON CONFLICT DO NOTHING`,
        [rows[0].id, datasetId, titles],
      );
    }
  }
}
