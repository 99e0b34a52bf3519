import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { entryCommand } from './support/app-process';
import { PROCESS_START_MS } from './support/timeouts';

const ROOT = join(__dirname, '..');
const TS = ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'];

/**
 * Every command-line entry answers --help with its usage and exit code 0, and does nothing
 * else: the database it is given cannot be reached (a command that connected would fail), and
 * the keys file and drop zone it is pointed at are never created. (`npm run catalog -- --help`
 * is apps/catalog-api/test/catalog-cli.e2e-spec.ts's.)
 */
describe('command-line entries answer --help without side effects', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'cli-help-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // The apps' entries run built when the build is fresh (CI), else through ts-node.
  const ENTRIES: Record<string, string[]> = {
    'npm start': ['scripts/start.mjs'],
    'npm run migrate': entryCommand('catalog-api', 'src/database/migrate').args,
    'npm run demo-data': [
      ...entryCommand('catalog-api', 'src/demo/demo-data.cli').args,
      '--keys-file',
      'KEYS',
    ],
    'npm run gen-data': [
      ...entryCommand('catalog-api', 'src/demo/gen-data.cli').args,
      '--datasets',
      '5',
    ],
    'npm run bench': [...TS, 'scripts/bench/bench.ts'],
    'npm run drs': ['scripts/drs.mjs', 'get'],
    'demo drop zone (npm start)': entryCommand('provisioner', 'src/demo/demo-dropzone.cli').args,
    'npm run provisioner': [
      ...entryCommand('provisioner', 'src/provisioner.cli').args,
      'reregister',
    ],
  };

  it.each(Object.keys(ENTRIES))(
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
    PROCESS_START_MS,
  );
});
