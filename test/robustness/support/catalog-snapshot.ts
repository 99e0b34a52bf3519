import type { DataSource } from 'typeorm';

/**
 * Not catalog data: counters of failed authentications, which hostile requests do change, and
 * the dataset exports that reads render and store (a copy of catalog data; the stamps of what
 * writes changed, `dataset_export_changes`, are kept in the fingerprint).
 */
const NOT_CATALOG_DATA = new Set(['auth_failures', 'dataset_exports']);

/**
 * A fingerprint of every table in the catalog schema (row count and an md5 of all rows), plus
 * the data version: equal fingerprints mean nothing was written, whatever the route.
 */
export async function catalogFingerprint(dataSource: DataSource): Promise<Record<string, string>> {
  const tables = await dataSource.query<{ name: string }[]>(
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const fingerprint: Record<string, string> = {};
  for (const { name } of tables.filter((table) => !NOT_CATALOG_DATA.has(table.name))) {
    const rows = await dataSource.query<{ n: string; digest: string | null }[]>(
      `SELECT count(*) AS n, md5(string_agg(t::text, '|' ORDER BY t::text)) AS digest FROM "${name}" t`,
    );
    fingerprint[name] = `${rows[0].n}:${rows[0].digest ?? ''}`;
  }
  return fingerprint;
}
