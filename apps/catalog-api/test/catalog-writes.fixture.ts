import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { TEST_GLOBAL_KEY } from '../../../test/support/catalog-app';

/** The reference system's documents, read in place (third-party: never copied here). */
export const DAISY_JSON_DIR = join(__dirname, '../../../../shared/reference/daisy-json');

export function daisyDocument(relativePath: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(DAISY_JSON_DIR, relativePath), 'utf8')) as Record<
    string,
    unknown
  >;
}

type Server = Parameters<typeof request>[0];

/** Authenticated requests with the global key unless another is given. */
export function writer(server: Server) {
  return {
    post: (path: string, body: unknown, key: string | null = TEST_GLOBAL_KEY) => {
      const req = request(server).post(path);
      return (key === null ? req : req.set('X-API-Key', key)).send(body as object);
    },
    patch: (path: string, body: unknown, key: string | null = TEST_GLOBAL_KEY) => {
      const req = request(server).patch(path);
      return (key === null ? req : req.set('X-API-Key', key)).send(body as object);
    },
    delete: (path: string, body: unknown, key: string | null = TEST_GLOBAL_KEY) => {
      const req = request(server).delete(path);
      return (key === null ? req : req.set('X-API-Key', key)).send(body as object);
    },
    get: (path: string, key: string | null = TEST_GLOBAL_KEY) => {
      const req = request(server).get(path);
      return key === null ? req : req.set('X-API-Key', key);
    },
  };
}

const SNAPSHOT_TABLES = [
  'partners',
  'contacts',
  'contact_partners',
  'users',
  'user_groups',
  'groups',
  'cohorts',
  'cohort_owners',
  'cohort_institutes',
  'projects',
  'project_contacts',
  'project_local_custodians',
  'project_company_personnel',
  'publications',
  'datasets',
  'dataset_local_custodians',
  'data_declarations',
  'data_declaration_cohorts',
  'use_conditions',
  'legal_bases',
  'storage_locations',
  'transfers',
  'accesses',
  'contracts',
  'contract_partner_roles',
  'endpoints',
  'exposures',
  'permission_grants',
  'terms',
  'audit_log',
];

/**
 * Everything a write could change, in one comparable value: row counts, the newest update of
 * each table that has one, the data version and the key hashes. Equal snapshots before and
 * after a refused request mean it changed nothing.
 */
export async function snapshot(dataSource: DataSource): Promise<Record<string, unknown>> {
  const rows = await dataSource.query<{ name: string; n: string }[]>(
    SNAPSHOT_TABLES.map((t) => `SELECT '${t}' AS name, count(*)::text AS n FROM ${t}`).join(
      ' UNION ALL ',
    ),
  );
  const [state] = await dataSource.query<Record<string, unknown>[]>(
    `SELECT (SELECT version FROM catalog_version) AS version,
       (SELECT max(updated_at) FROM partners) AS partners_updated,
       (SELECT max(updated_at) FROM projects) AS projects_updated,
       (SELECT max(updated_at) FROM datasets) AS datasets_updated,
       (SELECT max(updated_at) FROM cohorts) AS cohorts_updated,
       (SELECT max(updated_at) FROM users) AS users_updated,
       (SELECT string_agg(coalesce(api_key_hash, '-'), ',' ORDER BY id) FROM users) AS user_keys,
       (SELECT string_agg(is_published::text, ',' ORDER BY id) FROM partners) AS partners_published,
       (SELECT string_agg(coalesce(deprecated_at::text, '-'), ',' ORDER BY id) FROM exposures) AS exposures`,
  );
  return { counts: Object.fromEntries(rows.map((r) => [r.name, r.n])), ...state };
}

/**
 * Sends a request that must be refused and checks that the catalog is exactly as before (a
 * refused write changes nothing); returns the response for the caller's own checks.
 */
export async function expectRefusedUnchanged(
  dataSource: DataSource,
  send: () => request.Test,
  status: number,
): Promise<request.Response> {
  const before = await snapshot(dataSource);
  const res = await send().expect(status);
  expect((res.body as { status?: unknown }).status).toBe('Error');
  expect(await snapshot(dataSource)).toEqual(before);
  return res;
}
