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

/** Top-level folders of this repository that a decision record names files in. */
const REPO_FOLDERS = ['apps', 'libs', 'scripts', 'test', 'k8s', 'deploy', 'docs'];
/**
 * A backquoted repository path: from a top-level folder, plain segments only (no glob, brace,
 * placeholder or ellipsis), optionally ending in `/` for a folder.
 */
const REPO_PATH = new RegExp(`\`((?:${REPO_FOLDERS.join('|')})/[A-Za-z0-9_.@/-]+)\``, 'g');
/** `apps/api/…` in a record is another project's app (ghostfolio's, immich's): not ours to check. */
const isOurs = (path: string): boolean => {
  const [top, area] = path.split('/');
  return (top !== 'apps' && top !== 'libs') || existsSync(join(ROOT, top, area));
};
const RECORDS = FILES.filter((file) => relative(ROOT, file).startsWith('docs/decisions/'));

/**
 * A record describes the code as it is: every file or folder it names by its repository path
 * still exists (a record naming a moved or deleted file is rewritten with the code).
 */
describe('decision records name only files that exist', () => {
  it.each(RECORDS.map((file) => relative(ROOT, file)))('%s', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const missing = [...text.matchAll(REPO_PATH)]
      .map((match) => match[1])
      .filter((path) => !path.includes('..') && isOurs(path))
      .filter((path) => !existsSync(join(ROOT, path)));
    expect({ file, missing }).toEqual({ file, missing: [] });
  });

  it('finds the paths it checks', () => {
    const named = RECORDS.flatMap((file) => [
      ...readFileSync(file, 'utf8').matchAll(REPO_PATH),
    ]).length;
    expect(named).toBeGreaterThan(100);
  });
});
