import type { ImportContext } from './import-context';
import type { PartnerInput } from './import-shapes';
import { matchTracked, reserveAccessions, upsertTracked } from './record-matcher';
import { definedOnly } from './import-rows.repository';

/** Upserts partners by external_id, else name. */
export async function importPartners(ctx: ImportContext, items: PartnerInput[]): Promise<void> {
  const matches = await matchTracked(
    ctx,
    'partners',
    'name',
    'name',
    'partner',
    items.map((p, index) => ({ index, externalId: p.external_id, key: p.name ?? '' })),
  );
  ctx.throwIfProblems();
  await reserveAccessions(
    ctx,
    items.flatMap((p) => (p.external_id ? [p.external_id] : [])),
  );

  const ids = await upsertTracked(ctx, 'partners', items, matches, (p) => ({
    name: p.name,
    acronym: p.acronym,
    is_clinical: p.is_clinical,
    geo_category: p.geo_category,
    sector_category: p.sector_category,
    address: p.address,
    country_code: p.country_code,
    metadata: p.metadata,
  }));
  for (const [index, p] of items.entries()) {
    ctx.recordWrite('partner', ids[index], matches[index].id === null, definedOnly({ ...p }));
  }
}
