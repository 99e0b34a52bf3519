import { join } from 'node:path';
import { generateCatalog, GeneratedCatalog } from '../data/catalog-data';
import { createBenchDatabase, BenchDatabase } from './bench-database';
import type { BenchContext } from './context';
import { CATALOG_DIST, freePort, RunningProcess, runScript, startNodeProcess } from './processes';

export const BENCH_GLOBAL_KEY = 'bench-global-key-0123456789abcdef0123456789abcdef';

export interface BenchCatalog {
  database: BenchDatabase;
  env: NodeJS.ProcessEnv;
}

/** A fresh bench database with the catalog schema, migrated by the built migration script. */
export async function migratedCatalogDatabase(): Promise<BenchCatalog> {
  const database = await createBenchDatabase('catalog');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    DATABASE_URL: database.url,
    GLOBAL_API_KEY: BENCH_GLOBAL_KEY,
    CATALOG_SOURCE: 'https://catalog.bench.example',
    LOG_LEVEL: 'warn',
    MIGRATIONS_RUN: 'false',
  };
  try {
    runScript(join(CATALOG_DIST, 'database/migrate.js'), env);
  } catch (error) {
    await database.drop();
    throw error;
  }
  return { database, env };
}

/** The built catalog-api (node [nodeArgs] dist/…/main.js) on a free loopback port. */
export async function startCatalog(
  env: NodeJS.ProcessEnv,
  nodeArgs: string[] = [],
  /** A port chosen beforehand (a setting must name the URL before the start). */
  chosenPort?: number,
): Promise<RunningProcess & { url: string }> {
  const port = chosenPort ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const running = await startNodeProcess(
    join(CATALOG_DIST, 'main.js'),
    { ...env, PORT: String(port), HOST: '127.0.0.1' },
    `${url}/health/ready`,
    { nodeArgs },
  );
  return { ...running, url };
}

/**
 * Runs `work` on a fresh migrated bench database holding `datasets` synthetic datasets
 * (generated in `generateMs`), then drops the database.
 */
export async function withGeneratedCatalog<T>(
  ctx: BenchContext,
  datasets: number,
  work: (catalog: BenchCatalog, generated: GeneratedCatalog, generateMs: number) => Promise<T>,
): Promise<T> {
  const catalog = await migratedCatalogDatabase();
  try {
    const started = performance.now();
    const generated = await generateCatalog(catalog.database.url, datasets);
    const generateMs = performance.now() - started;
    ctx.log(`generated ${datasets} datasets in ${(generateMs / 1000).toFixed(1)} s`);
    return await work(catalog, generated, generateMs);
  } finally {
    await catalog.database.drop();
  }
}
