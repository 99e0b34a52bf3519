import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = join(__dirname, '..');

/** README.md, docs/ and the READMEs beside the code. */
function markdownFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.') || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) markdownFiles(path, out);
    else if (name.endsWith('.md')) out.push(path);
  }
  return out;
}

const FILES = [
  join(ROOT, 'README.md'),
  ...markdownFiles(join(ROOT, 'docs')),
  ...markdownFiles(join(ROOT, 'apps')),
  ...markdownFiles(join(ROOT, 'libs')),
];

/**
 * The repository stands alone: every link of its docs to a file points at one inside it that
 * exists (web references to standards and other projects' code stay allowed).
 */
describe('docs link only to files of the repository', () => {
  it.each(FILES.map((file) => relative(ROOT, file)))('%s', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const broken = [...text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)]
      .map((match) => match[1])
      .filter((target) => !/^[a-z]+:/.test(target))
      .filter((target) => {
        const path = resolve(dirname(join(ROOT, file)), target);
        return relative(ROOT, path).startsWith('..') || !existsSync(path);
      });
    expect({ file, broken }).toEqual({ file, broken: [] });
    expect({ file, outside: /\.\.\/shared\//.test(text) }).toEqual({ file, outside: false });
  });
});
