import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..');
const TS = ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'];

/**
 * Every command-line entry answers --help with its usage and exit code 0, and does nothing
 * else: the database it is given cannot be reached (a command that connected would fail), and
 * the keys file and drop zone it is pointed at are never created. (`npm run catalog -- --help`
 * is apps/catalog-api/test/catalog-cli.e2e-spec.ts's.) Concurrent: each is a process of its own.
 */
describe('command-line entries answer --help without side effects', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'cli-help-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const ENTRIES: Record<string, string[]> = {
    'npm start': ['scripts/start.mjs'],
    'npm run migrate': [...TS, 'apps/catalog-api/src/database/migrate.ts'],
    'npm run demo-data': [
      ...TS,
      'apps/catalog-api/src/demo/demo-data.cli.ts',
      '--keys-file',
      'KEYS',
    ],
    'npm run gen-data': [...TS, 'apps/catalog-api/src/demo/gen-data.cli.ts', '--datasets', '5'],
    'npm run bench': [...TS, 'scripts/bench/bench.ts'],
    'demo drop zone (npm start)': [...TS, 'apps/provisioner/src/demo/demo-dropzone.cli.ts'],
  };

  it.concurrent.each(Object.keys(ENTRIES))(
    '%s',
    async (entry) => {
      const keys = join(dir, `${entry.replace(/\W+/g, '-')}-keys.json`);
      const dropzone = join(dir, `${entry.replace(/\W+/g, '-')}-dropzone`);
      const args = ENTRIES[entry].map((arg) => (arg === 'KEYS' ? keys : arg));
      const { stdout } = await promisify(execFile)(process.execPath, [...args, '--help'], {
        cwd: ROOT,
        env: {
          ...process.env,
          DATABASE_URL: 'postgres://postgres@127.0.0.1:1/unreachable',
          SOURCES: `[{"name":"dropzone","type":"dropzone","root":${JSON.stringify(dropzone)}}]`,
        },
      });
      expect(stdout).toMatch(/^Usage:/m);
      expect(existsSync(keys)).toBe(false);
      expect(existsSync(dropzone) && readdirSync(dropzone).length > 0).toBe(false);
    },
    60_000,
  );
});
