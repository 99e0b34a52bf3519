import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');
const SCRIPT = join(ROOT, 'scripts/dev/import-walk.mjs');
/** The script type-checks the whole repository before it walks: seconds, more on a busy machine. */
const PROCESS_TIMEOUT = 120_000;

function walk(...args: string[]) {
  const run = spawnSync(process.execPath, [SCRIPT, ...args], { cwd: ROOT, encoding: 'utf8' });
  return { status: run.status, out: run.stdout + run.stderr };
}

describe('import-walk.mjs --max-returns (the ceiling npm run lint holds)', () => {
  // Passing at the count is what `npm run lint` runs on every change; one walk here for the failure.
  it(
    'fails above the ceiling, naming the count and the ceiling',
    () => {
      const run = walk('--max-returns', '0');
      const returns = Number(/returns to a file already left: (\d+)/.exec(run.out)?.[1]);
      expect(returns).toBeGreaterThan(0);
      expect(run.status).toBe(1);
      expect(run.out).toContain(`${returns} returns to a file already left, over the ceiling of 0`);
    },
    PROCESS_TIMEOUT,
  );

  it('refuses a ceiling that is not a whole number', () => {
    const run = walk('--max-returns', 'many');
    expect(run.status).toBe(1);
    expect(run.out).toContain('--max-returns takes a whole number, not many');
  });
});
