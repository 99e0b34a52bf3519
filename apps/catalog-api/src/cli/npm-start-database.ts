import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { processIsAlive } from '@app/platform';

/** The state file a running `npm start` writes (scripts/start.mjs) and removes when it stops. */
const NPM_START_STATE = 'npm-start.json';

/**
 * The environment the command-line tool runs with: as given when it sets DATABASE_URL; else,
 * beside a running `npm start` of this checkout (its state file in `root`), with the catalog
 * database of its embedded PostgreSQL, which `note` names. A stale state file (its process gone)
 * is ignored. npm start keeps it in `.data/`, or in START_DATA_DIR when that is set.
 */
export function withNpmStartDatabase(
  env: NodeJS.ProcessEnv,
  root: string,
  note: (text: string) => void,
  isAlive: (pid: number) => boolean = processIsAlive,
): NodeJS.ProcessEnv {
  if (env.DATABASE_URL) return env;
  const file = resolve(root, env.START_DATA_DIR ?? '.data', NPM_START_STATE);
  if (!existsSync(file)) return env;
  let state: { pid?: unknown; catalog_database_url?: unknown };
  try {
    state = JSON.parse(readFileSync(file, 'utf8')) as typeof state;
  } catch {
    return env;
  }
  const url = state.catalog_database_url;
  if (typeof url !== 'string' || typeof state.pid !== 'number' || !isAlive(state.pid)) return env;
  note(`DATABASE_URL is not set: using the embedded database of the running npm start (${url})`);
  return { ...env, DATABASE_URL: url };
}
