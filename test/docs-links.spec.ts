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

/** The project's own code and configuration: where a setting or function a record names lives. */
function codeFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) codeFiles(path, out);
    else if (/\.(ts|mjs|js|json|ya?ml|sh|conf|sql)$/.test(name)) out.push(path);
  }
  return out;
}

const identifiersIn = (paths: string[]): Set<string> =>
  new Set(paths.flatMap((path) => readFileSync(path, 'utf8').match(/[A-Za-z_$][\w$]*/g) ?? []));

const OUR_NAMES = identifiersIn([
  ...['apps', 'libs', 'scripts', 'test', 'k8s', 'deploy', '.ci'].flatMap((dir) =>
    existsSync(join(ROOT, dir)) ? codeFiles(join(ROOT, dir)) : [],
  ),
  ...[
    'Dockerfile',
    'package.json',
    ...readdirSync(ROOT).filter((f) => /^docker-compose.*\.yml$/.test(f)),
  ]
    .map((file) => join(ROOT, file))
    .filter((path) => existsSync(path)),
]);

/** Names in the type declarations of the packages we depend on (a record may cite BullMQ's). */
let dependencyNames: Set<string> | undefined;
function namesOfDependencies(): Set<string> {
  if (dependencyNames) return dependencyNames;
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<
    string,
    Record<string, string>
  >;
  const declarations = (dir: string, out: string[] = []): string[] => {
    for (const name of existsSync(dir) ? readdirSync(dir) : []) {
      const path = join(dir, name);
      if (name === 'node_modules') continue;
      if (statSync(path).isDirectory()) declarations(path, out);
      else if (name.endsWith('.d.ts')) out.push(path);
    }
    return out;
  };
  dependencyNames = identifiersIn(
    Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).flatMap((dep) =>
      declarations(join(ROOT, 'node_modules', dep)),
    ),
  );
  return dependencyNames;
}

/**
 * A setting: `SOME_SETTING` or `SOME_SETTING=value`. Operating-system constants (`O_DIRECT`,
 * `SEEK_DATA`, `RENAME_NOREPLACE`, `PATH_MAX`) are the kernel's, not settings.
 */
const SETTING = /`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?:=[^`]*)?`/g;
const OS_CONSTANT = /^(O_|SEEK_|RENAME_|PATH_MAX$)/;
/** A function or method: `camelCase`, `Class.method`, optionally called: `name()`, `name(args)`. */
const FUNCTION = /`(?:[A-Za-z_$][\w$]*\.)*([a-z][a-z0-9]*[A-Z][\w$]*)(?:\([^`]*\))?`/g;

/**
 * A record describes the code as it is, down to its names: every setting it names is read
 * somewhere in the code or the deployment files, every function it names is defined in our code
 * (or, when it cites a library's, in that library's declarations).
 */
describe('decision records name only settings and functions that exist', () => {
  it.each(RECORDS.map((file) => relative(ROOT, file)))('%s', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const settings = [...text.matchAll(SETTING)]
      .map((match) => match[1])
      .filter((name) => !OS_CONSTANT.test(name) && !OUR_NAMES.has(name));
    const functions = [...text.matchAll(FUNCTION)]
      .map((match) => match[1])
      .filter((name) => !OUR_NAMES.has(name) && !namesOfDependencies().has(name));
    expect({ file, settings, functions }).toEqual({ file, settings: [], functions: [] });
  });

  it('finds the settings and functions it checks', () => {
    const text = RECORDS.map((file) => readFileSync(file, 'utf8')).join('\n');
    expect([...text.matchAll(SETTING)].length).toBeGreaterThan(100);
    expect([...text.matchAll(FUNCTION)].length).toBeGreaterThan(40);
  });
});
