import { randomBytes } from 'node:crypto';
import { withClient } from '../../lib/pg-client';

/** The Postgres server the benchmarks create their own databases on (never an existing one). */
export function benchServerUrl(): string {
  const configured = process.env.BENCH_POSTGRES_URL;
  if (configured) return configured.replace(/\/+$/, '');
  return 'postgres://postgres@127.0.0.1:5432';
}

export { withClient };

export interface BenchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** A new empty database named bench_<kind>_<random>, dropped by `drop()`. */
export async function createBenchDatabase(kind: string): Promise<BenchDatabase> {
  const server = benchServerUrl();
  const name = `bench_${kind}_${randomBytes(4).toString('hex')}`;
  await withClient(`${server}/postgres`, (c) => c.query(`CREATE DATABASE "${name}"`));
  return {
    name,
    url: `${server}/${name}`,
    drop: () =>
      withClient(`${server}/postgres`, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(
        () => undefined,
      ),
  };
}

export async function postgresVersion(): Promise<string> {
  return withClient(`${benchServerUrl()}/postgres`, async (c) => {
    const { rows } = await c.query<{ v: string }>('SELECT current_setting(\'server_version\') AS v');
    return rows[0]?.v ?? 'unknown';
  });
}

/**
 * The trail benches' "off" side: a BEFORE INSERT trigger on `audit_log` that drops every row
 * written on a connection carrying `bench.trail=off` (nothing appended, nothing chained). Its
 * name sorts before the chain's: PostgreSQL fires a table's row triggers in name order, and a
 * row dropped by the first reaches no other. The on side pays for the same check.
 */
export async function dropTrailRowsOnOffConnections(client: {
  query(sql: string): Promise<unknown>;
}): Promise<void> {
  await client.query(`CREATE FUNCTION bench_trail_off() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF current_setting('bench.trail', true) = 'off' THEN RETURN NULL; END IF;
      RETURN NEW;
    END $$`);
  await client.query(`CREATE TRIGGER a_bench_trail_off BEFORE INSERT ON audit_log
    FOR EACH ROW EXECUTE FUNCTION bench_trail_off()`);
}
