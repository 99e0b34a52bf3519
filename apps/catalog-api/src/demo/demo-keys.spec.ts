import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_ENDPOINTS, DEMO_USERS } from './demo-catalog';
import { demoKeysFromFile, generateDemoKeys } from './demo-keys';

const allKeys = (keys: ReturnType<typeof generateDemoKeys>): string[] => [
  ...keys.users.map((u) => u.apiKey),
  ...keys.endpoints.map((e) => e.apiKey),
];

describe('demo keys', () => {
  it('has a key for every demo user meant to have one and every endpoint, endpoint keys of 64 characters', () => {
    const keys = generateDemoKeys();
    expect(keys.users.map((u) => u.username)).toEqual(
      DEMO_USERS.filter((u) => u.withKey).map((u) => u.username),
    );
    expect(keys.endpoints.map((e) => e.name)).toEqual(DEMO_ENDPOINTS.map((e) => e.name));
    for (const e of keys.endpoints) expect(e.apiKey).toMatch(/^[A-Za-z0-9]{64}$/);
    for (const u of keys.users) expect(u.apiKey).toMatch(/^[A-Za-z0-9]{48}$/);
  });

  it('differ between installations: nothing about them follows from the public demo names', () => {
    const first = allKeys(generateDemoKeys());
    const second = allKeys(generateDemoKeys());
    expect(first.filter((key) => second.includes(key))).toEqual([]);
    expect(new Set(first).size).toBe(first.length);
  });

  it('are made once per installation and kept in a file only its owner can read', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'demo-keys-')), 'nested', 'demo-keys.json');
    const made = demoKeysFromFile(file);
    expect(made.created).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = demoKeysFromFile(file);
    expect(again).toEqual({ keys: made.keys, created: false });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(made.keys);
  });

  it('refuses a keys file that lacks a key, rather than loading a demo nobody can open', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'demo-keys-')), 'demo-keys.json');
    const keys = generateDemoKeys();
    writeFileSync(file, JSON.stringify({ ...keys, endpoints: keys.endpoints.slice(1) }));
    expect(() => demoKeysFromFile(file)).toThrow(`${file} does not hold every demo key`);
  });
});
