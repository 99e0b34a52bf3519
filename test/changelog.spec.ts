import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');

it('has release notes for the current version, newest first, after the unreleased changes', () => {
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    version: string;
  };
  const headings = [
    ...readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8').matchAll(/^## (.+)$/gm),
  ].map((m) => m[1]);
  expect(headings[0]).toBe('Unreleased');
  expect(headings).toContain(version);
  const versions = headings.slice(1);
  const order = (v: string) => v.split('.').map(Number);
  const sorted = [...versions].sort((a, b) => {
    const [x, y] = [order(a), order(b)];
    return y[0] - x[0] || y[1] - x[1] || y[2] - x[2];
  });
  expect(versions).toEqual(sorted);
  expect(versions.every((v) => /^\d+\.\d+\.\d+$/.test(v))).toBe(true);
});
