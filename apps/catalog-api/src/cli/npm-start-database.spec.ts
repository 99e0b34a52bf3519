import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withNpmStartDatabase } from './npm-start-database';

describe('the catalog CLI beside a running npm start', () => {
  const root = mkdtempSync(join(tmpdir(), 'cli-npm-start-'));
  const url = 'postgres://postgres@127.0.0.1:54329/catalog';
  const state = (content: unknown) => {
    mkdirSync(join(root, '.data'), { recursive: true });
    writeFileSync(join(root, '.data/npm-start.json'), JSON.stringify(content));
  };
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("uses npm start's embedded database when DATABASE_URL is not set, and says so", () => {
    state({ pid: process.pid, catalog_database_url: url });
    const notes: string[] = [];
    const env = withNpmStartDatabase({ PATH: '/bin' }, root, (t) => notes.push(t));
    expect(env).toEqual({ PATH: '/bin', DATABASE_URL: url });
    expect(notes).toEqual([
      `DATABASE_URL is not set: using the embedded database of the running npm start (${url})`,
    ]);
  });

  it('keeps a DATABASE_URL that is set, and ignores a stopped or database-less npm start', () => {
    state({ pid: process.pid, catalog_database_url: url });
    const given = { DATABASE_URL: 'postgres://db/catalog' };
    expect(withNpmStartDatabase(given, root, () => undefined)).toBe(given);
    expect(
      withNpmStartDatabase(
        {},
        root,
        () => undefined,
        () => false,
      ),
    ).toEqual({});
    state({ pid: process.pid });
    expect(withNpmStartDatabase({}, root, () => undefined)).toEqual({});
    rmSync(join(root, '.data'), { recursive: true });
    expect(withNpmStartDatabase({}, root, () => undefined)).toEqual({});
  });
});
