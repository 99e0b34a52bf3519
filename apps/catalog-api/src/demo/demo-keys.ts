import { createHash } from 'node:crypto';
import { DEMO_ENDPOINTS, DEMO_PARTNERS, DEMO_USERS } from './demo-catalog';

/**
 * Demo keys are derived from public names, so anyone can compute them: they exist to make a
 * demo reproducible and must never guard real data. Real keys come from the admin API.
 */
export function demoUserKey(username: string): string {
  return createHash('sha256').update(`catalog-demo-user:${username}`).digest('hex').slice(0, 48);
}

/** Endpoint keys are exactly 64 characters, as the contract requires. */
export function demoEndpointKey(name: string): string {
  return createHash('sha256').update(`catalog-demo-endpoint:${name}`).digest('hex');
}

/** The partner whose presence means the demo catalog is loaded. */
export const DEMO_CATALOG_MARKER = DEMO_PARTNERS[0].name;

export interface DemoKeys {
  users: { username: string; active: boolean; apiKey: string }[];
  endpoints: { name: string; apiKey: string }[];
}

export function demoKeys(): DemoKeys {
  return {
    users: DEMO_USERS.filter((u) => u.withKey).map((u) => ({
      username: u.username,
      active: u.active,
      apiKey: demoUserKey(u.username),
    })),
    endpoints: DEMO_ENDPOINTS.map((e) => ({ name: e.name, apiKey: demoEndpointKey(e.name) })),
  };
}

export function formatDemoKeys(keys: DemoKeys): string {
  const lines = ['Demo API keys (demo only: derived from public names, never use for real data):'];
  for (const u of keys.users) {
    lines.push(`  user ${u.username}${u.active ? '' : ' (inactive)'}: ${u.apiKey}`);
  }
  for (const e of keys.endpoints) lines.push(`  endpoint "${e.name}": ${e.apiKey}`);
  return lines.join('\n');
}
