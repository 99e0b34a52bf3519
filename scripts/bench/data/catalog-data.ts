import { DataSource } from 'typeorm';
import { generateApiKey, hashApiKey } from '@app/auth';
import { buildTypeOrmOptions } from '../../../apps/catalog-api/src/typeorm-options';
import { generateSyntheticCatalog } from '../../../apps/catalog-api/src/demo/synthetic-catalog';

export interface GeneratedCatalog {
  datasets: number;
  projects: number;
  userKey: string;
  endpointKey: string;
  /** The user holding userKey (a write target: PATCH /api/admin/users/:id). */
  viewerId: number;
}


/**
 * The catalog's own synthetic generator (`npm run gen-data`), plus what the benchmark needs on
 * top: a user whose key sees part of the catalog (`protected` granted on every fourth project,
 * so the user view is filtered, not everything or nothing).
 */
export async function generateCatalog(databaseUrl: string, datasets: number): Promise<GeneratedCatalog> {
  const dataSource = new DataSource(buildTypeOrmOptions({ DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: 2 }));
  await dataSource.initialize();
  try {
    const { tag, endpointKey } = await generateSyntheticCatalog(dataSource, { datasets });
    // Random like every key, even in a throw-away database: no key here is derivable.
    const userKey = generateApiKey();
    const viewerId = await dataSource.transaction(async (m) => {
      const [viewer] = await m.query<{ id: number }[]>(
        `INSERT INTO users (username, first_name, last_name, email, api_key_hash)
         VALUES ('bench.viewer', 'Bench', 'Viewer', 'viewer@bench.example', $1) RETURNING id`,
        [hashApiKey(userKey)],
      );
      await m.query(
        `INSERT INTO permission_grants (user_id, object_type, object_id)
         SELECT $1, 'project', id FROM (
           SELECT id, row_number() OVER (ORDER BY id) AS n FROM projects WHERE acronym LIKE $2 || '-P%'
         ) p WHERE n % 4 = 0`,
        [viewer.id, tag],
      );
      return viewer.id;
    });
    await dataSource.query('ANALYZE');
    const [{ n }] = await dataSource.query<{ n: string }[]>(
      `SELECT count(*) AS n FROM projects WHERE acronym LIKE $1 || '-P%'`,
      [tag],
    );
    return { datasets, projects: Number(n), userKey, endpointKey, viewerId };
  } finally {
    await dataSource.destroy();
  }
}
