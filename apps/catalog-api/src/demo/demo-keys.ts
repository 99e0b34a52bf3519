import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { generateApiKey } from '@app/auth';
import { ENDPOINT_KEY_LENGTH } from '../auth/catalog-key.resolver';
import { DEMO_ENDPOINTS, DEMO_USERS } from './demo-catalog';

export interface DemoKeys {
  users: { username: string; active: boolean; apiKey: string }[];
  endpoints: { name: string; apiKey: string }[];
}

/**
 * New random keys for the demo users and endpoints. The demo's names are public, so keys
 * derived from them could be computed by anyone: each installation makes its own instead.
 */
export function generateDemoKeys(): DemoKeys {
  return {
    users: DEMO_USERS.filter((u) => u.withKey).map((u) => ({
      username: u.username,
      active: u.active,
      apiKey: generateApiKey(),
    })),
    endpoints: DEMO_ENDPOINTS.map((e) => ({
      name: e.name,
      apiKey: generateApiKey(ENDPOINT_KEY_LENGTH),
    })),
  };
}

/** True when `keys` has a well-formed key for every demo user with a key and every endpoint. */
function complete(keys: DemoKeys): boolean {
  const users = new Map(keys.users?.map((u) => [u.username, u.apiKey]));
  const endpoints = new Map(keys.endpoints?.map((e) => [e.name, e.apiKey]));
  const wellFormed = (key: unknown, length?: number) =>
    typeof key === 'string' && key.length >= 16 && (length === undefined || key.length === length);
  return (
    DEMO_USERS.filter((u) => u.withKey).every((u) => wellFormed(users.get(u.username))) &&
    DEMO_ENDPOINTS.every((e) => wellFormed(endpoints.get(e.name), ENDPOINT_KEY_LENGTH))
  );
}

/**
 * This installation's demo keys, kept in `file` (readable by its owner only) so that a restart
 * finds the keys the demo catalog was loaded with; made and written on first use.
 */
export function demoKeysFromFile(file: string): { keys: DemoKeys; created: boolean } {
  if (existsSync(file)) {
    const keys = JSON.parse(readFileSync(file, 'utf8')) as DemoKeys;
    if (!complete(keys))
      throw new Error(`${file} does not hold every demo key: delete it to start over`);
    return { keys, created: false };
  }
  const keys = generateDemoKeys();
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  return { keys, created: true };
}

export function formatDemoKeys(keys: DemoKeys): string {
  const lines = ['Demo API keys (random for this installation; demo data only):'];
  for (const u of keys.users) {
    lines.push(`  user ${u.username}${u.active ? '' : ' (inactive)'}: ${u.apiKey}`);
  }
  for (const e of keys.endpoints) lines.push(`  endpoint "${e.name}": ${e.apiKey}`);
  return lines.join('\n');
}
