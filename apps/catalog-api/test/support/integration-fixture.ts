import { DataSource } from 'typeorm';
import { hashApiKey } from '@app/auth';
import { startCatalogApp, type CatalogTestApp } from '../../../../test/support/catalog-app';

/** A started catalog app, as the integration tests hold it (they never need its database URL). */
export type IntegrationApp = Omit<CatalogTestApp, 'databaseUrl'>;

/**
 * A catalog app with these settings on the given database (a fresh one when omitted), so one
 * test file can run several differently configured apps over the same data. The start-up itself
 * is the shared one of test/support, so these apps are configured exactly like every other test's.
 */
export function startIntegrationApp(
  env: Record<string, string>,
  databaseUrl?: string,
): Promise<CatalogTestApp> {
  return startCatalogApp(env, databaseUrl);
}

/** A dataset (exposed to a catalog endpoint unless told otherwise); returns its accession. */
export async function addDataset(ds: DataSource, title: string, exposed = true): Promise<string> {
  const [row] = await ds.query<{ id: number; elu_accession: string }[]>(
    'INSERT INTO datasets (title) VALUES ($1) RETURNING id, elu_accession',
    [title],
  );
  if (exposed) {
    const [endpoint] = await ds.query<{ id: number }[]>(
      `INSERT INTO endpoints (name, url_pattern, api_key_hash) VALUES ($1, 'https://dc.example/\${entity_id}', $2)
       ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name RETURNING id`,
      ['Test catalog', hashApiKey('test-catalog-endpoint-key')],
    );
    await ds.query('INSERT INTO exposures (form_id, dataset_id, endpoint_id) VALUES (1, $1, $2)', [
      row.id,
      endpoint.id,
    ]);
  }
  return row.elu_accession;
}

export interface PersonSeed {
  oidcId?: string | null;
  email?: string | null;
  firstName?: string;
  lastName?: string;
}

export async function addUser(
  ds: DataSource,
  username: string,
  seed: PersonSeed & { active?: boolean; apiKeyHash?: string } = {},
): Promise<number> {
  const [row] = await ds.query<{ id: number }[]>(
    `INSERT INTO users (username, first_name, last_name, email, oidc_id, is_active, api_key_hash)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
    [
      username,
      seed.firstName ?? 'First',
      seed.lastName ?? 'Last',
      seed.email ?? null,
      seed.oidcId ?? null,
      seed.active ?? true,
      seed.apiKeyHash ?? null,
    ],
  );
  return row.id;
}

export async function addContact(ds: DataSource, seed: PersonSeed = {}): Promise<number> {
  const [row] = await ds.query<{ id: number }[]>(
    `INSERT INTO contacts (first_name, last_name, email, oidc_id, type)
     VALUES ($1, $2, $3, $4, 'Researcher') RETURNING id`,
    [
      seed.firstName ?? 'Contact',
      seed.lastName ?? 'Person',
      seed.email ?? null,
      seed.oidcId ?? null,
    ],
  );
  return row.id;
}

export interface AccessRow {
  id: number;
  dataset: string;
  user_id: number | null;
  contact_id: number | null;
  status: string;
  granted_on: string | null;
  grant_expires_on: string | null;
  access_notes: string;
  was_generated_automatically: boolean;
  application_id: number | null;
  request_subject: string | null;
  created_by: string | null;
}

export async function accessRows(ds: DataSource): Promise<AccessRow[]> {
  return ds.query<AccessRow[]>(
    `SELECT a.id, d.elu_accession AS dataset, a.user_id, a.contact_id, a.status::text AS status,
       a.granted_on::text AS granted_on, a.grant_expires_on::text AS grant_expires_on,
       a.access_notes, a.was_generated_automatically, a.application_id, a.request_subject,
       u.username AS created_by
     FROM accesses a JOIN datasets d ON d.id = a.dataset_id LEFT JOIN users u ON u.id = a.created_by_id
     ORDER BY a.id`,
  );
}

export async function count(
  ds: DataSource,
  table: 'accesses' | 'contacts' | 'users',
): Promise<number> {
  const [row] = await ds.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${table}`);
  return row.n;
}

/** YYYY-MM-DD in UTC, `offset` days from today. */
export function utcDay(offset = 0): string {
  return new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
}
