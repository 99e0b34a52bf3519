import type { ImportContext } from './import-context';

/** Drops undefined values: absent fields keep their stored value on update. */
export function definedOnly(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));
}

/**
 * Inserts (with the incoming accession, else the sequence default) or updates the given
 * columns of one row; returns its id. On update an incoming accession is set only where the
 * record has none.
 */
export async function upsertRow(
  ctx: ImportContext,
  table: string,
  existingId: number | null,
  values: Record<string, unknown>,
  externalId?: string | null,
): Promise<number> {
  const defined = definedOnly(values);
  if (existingId === null) {
    if (externalId) defined.elu_accession = externalId;
    const columns = Object.keys(defined);
    const rows = await ctx.manager.query<{ id: number }[]>(
      `INSERT INTO ${table} (${columns.join(', ')})
       VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING id`,
      Object.values(defined),
    );
    return rows[0].id;
  }
  const columns = Object.keys(defined);
  const sets = columns.map((c, i) => `${c} = $${i + 2}`);
  if (externalId) sets.push(`elu_accession = COALESCE(elu_accession, $${columns.length + 2})`);
  sets.push('updated_at = now()');
  await ctx.manager.query(`UPDATE ${table} SET ${sets.join(', ')} WHERE id = $1`, [
    existingId,
    ...Object.values(defined),
    ...(externalId ? [externalId] : []),
  ]);
  return existingId;
}

/** Replaces the rows of a two-column link table for one owner. */
export async function replaceLinks(
  ctx: ImportContext,
  table: string,
  ownerColumn: string,
  ownerId: number,
  otherColumn: string,
  otherIds: number[],
): Promise<void> {
  await ctx.manager.query(`DELETE FROM ${table} WHERE ${ownerColumn} = $1`, [ownerId]);
  if (otherIds.length === 0) return;
  await ctx.manager.query(
    `INSERT INTO ${table} (${ownerColumn}, ${otherColumn})
     SELECT $1, unnest($2::int[]) ON CONFLICT DO NOTHING`,
    [ownerId, [...new Set(otherIds)]],
  );
}

/**
 * Reports values of a unique column that another record already holds (a create, or a rename
 * onto someone else's value), so the write never hits the constraint.
 */
export async function reportTaken(
  ctx: ImportContext,
  table: string,
  column: string,
  field: string,
  items: { index: number; value: string | null | undefined; ownId: number | null }[],
): Promise<void> {
  const wanted = items.filter((i) => i.value !== null && i.value !== undefined);
  if (wanted.length === 0) return;
  const rows = await ctx.manager.query<{ id: number; value: string }[]>(
    `SELECT id, lower(${column}::text) AS value FROM ${table} WHERE lower(${column}::text) = ANY($1::text[])`,
    [wanted.map((i) => String(i.value).toLowerCase())],
  );
  for (const item of wanted) {
    const holder = rows.find(
      (r) => r.value === String(item.value).toLowerCase() && r.id !== item.ownId,
    );
    if (holder !== undefined) ctx.problem(item.index, field, 'is already used by another record');
  }
}
