#!/usr/bin/env node
// The source tree's import graph, floor by floor, and the names of its files: the layout rules of
// docs/architecture.md ("Where code lives"), checked by `npm run lint`.
//
//   node scripts/dev/import-graph.mjs               summary
//   node scripts/dev/import-graph.mjs --list        the summary, every offending import or file,
//                                                   and the imports that tie each folder cycle
//   node scripts/dev/import-graph.mjs --check       exit 1 on any folder cycle, upward import or
//                                                   misnamed file
//   --app <name>   only that app (repeatable; `libs` for the libraries); default: everything
//   --root <dir>   the tree to read (tests plant offending trees); default: this repository
//
// - folder cycles: strongly connected groups of an app's top-level folders (apps/<app>/src/<area>/)
//   and of the libraries, drawn from the imports of production files (not *.spec.ts);
// - upward imports: a file on a lower floor importing one on a higher floor. Floors: the
//   libraries (0); an app's foundation folders, named below (1); its feature folders (2); its
//   root files and the assemblies named below (3). An entry point (main.ts, worker.ts,
//   migrate.ts, *.cli.ts) is on the root floor wherever it sits, as a node of its own: nothing
//   imports it;
// - misnamed files: the role rule (docs/decisions/file-roles-and-floors.md). A file declaring
//   a class that plays a role (by its decorator, its base class or the role word its name ends
//   in) carries that role's suffix; a role suffix is one of ROLES and is carried only by a file
//   that plays it; anything else is a plain module named for what it defines, with no suffix.
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const args = process.argv.slice(2);
const list = args.includes('--list');
const check = args.includes('--check');
const valuesOf = (flag) => args.flatMap((a, i) => (args[i - 1] === flag ? [a] : []));
const root = resolve(
  valuesOf('--root')[0] ?? join(dirname(new URL(import.meta.url).pathname), '../..'),
);
const apps = new Set(valuesOf('--app'));

/** Folders every feature may use and that must use no feature (floor 1). */
const FOUNDATION = {
  'catalog-api': [
    'common',
    'config',
    'database',
    'catalog-version',
    'read-cache',
    'auth',
    'health',
  ],
  provisioner: ['common', 'config', 'queue', 'auth', 'health'],
};
/**
 * Folders on the root floor (3): they assemble the app like main.ts and nothing imports them.
 * The catalog's command-line tool boots the whole app module (cli/run-cli.ts) to call its services.
 */
const ASSEMBLIES = {
  'catalog-api': ['cli'],
};
const ENTRY_POINT = /^(main|worker|migrate)\.ts$|\.cli\.ts$/;
const ALIASES = {
  '@app/errors': 'libs/errors/src',
  '@app/auth': 'libs/auth/src',
  '@app/platform': 'libs/platform/src',
  '@app/crypt4gh': 'libs/crypt4gh/src',
};

/**
 * The role suffixes of docs/architecture.md. A role with a `word` or `decorators` is played by a
 * class (its name ends in the word, or it carries the decorator, or extends a base); `holds: 'class'`
 * refuses the suffix on a file without such a class. The other roles may be held by functions or
 * objects (a queue's names, SQL fragments, decorators, a thread's entry, command objects, the
 * export and import mappings, a module built by a factory). A file holding several of a role
 * held by functions may use the plural (`.commands.ts`, `.decorators.ts`).
 */
const ROLES = {
  module: { word: 'Module', decorators: ['Module'] },
  controller: { word: 'Controller', decorators: ['Controller'], holds: 'class' },
  dto: { word: 'Dto', holds: 'any class' },
  service: { word: 'Service', holds: 'class' },
  repository: { word: 'Repository', holds: 'class' },
  entity: { decorators: ['Entity', 'ViewEntity'], holds: 'class' },
  guard: { word: 'Guard', holds: 'class' },
  interceptor: { word: 'Interceptor', holds: 'class' },
  pipe: { word: 'Pipe', holds: 'class' },
  filter: { word: 'Filter', decorators: ['Catch'], holds: 'class' },
  resolver: { word: 'Resolver', holds: 'class' },
  scheduler: { word: 'Scheduler', holds: 'class' },
  processor: {
    word: 'Processor',
    decorators: ['Processor'],
    bases: ['WorkerHost'],
    holds: 'class',
  },
  producer: { word: 'Producer', holds: 'class' },
  client: { word: 'Client', holds: 'class' },
  source: { word: 'Source' },
  settings: { word: 'Settings', holds: 'class' },
  importer: { word: 'Importer' },
  exporter: { word: 'Exporter' },
  command: { word: 'Command' },
  queue: {},
  sql: {},
  decorator: {},
  middleware: {},
  thread: {},
  step: {},
  cli: {},
};
const PLURALS = new Set(['commands', 'decorators']);
const ROLE_OF_WORD = Object.entries(ROLES)
  .filter(([, r]) => r.word)
  .map(([suffix, r]) => [r.word, suffix]);

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.ts') && !name.endsWith('.spec.ts') && !name.endsWith('.d.ts'))
      out.push(path);
  }
  return out;
}

const dirsOf = (parent) => (existsSync(join(root, parent)) ? readdirSync(join(root, parent)) : []);
const sources = [
  ...dirsOf('apps')
    .filter((app) => apps.size === 0 || apps.has(app))
    .map((app) => join(root, 'apps', app, 'src')),
  ...(apps.size === 0 || apps.has('libs')
    ? dirsOf('libs').map((lib) => join(root, 'libs', lib, 'src'))
    : []),
].filter(existsSync);
const files = sources
  .flatMap((dir) => walk(dir))
  .map((f) => relative(root, f).split(sep).join('/'));
const known = new Set(files);

function resolveImport(from, spec) {
  let base;
  if (spec.startsWith('.')) base = join(dirname(from), spec);
  else {
    const alias = Object.keys(ALIASES).find((a) => spec === a || spec.startsWith(`${a}/`));
    if (!alias) return undefined;
    base = ALIASES[alias] + spec.slice(alias.length);
  }
  base = base.split(sep).join('/').replace(/\.js$/, '');
  for (const candidate of [`${base}.ts`, `${base}/index.ts`])
    if (known.has(candidate)) return candidate;
  return undefined;
}

/**
 * `catalog-api:datasets`, `catalog-api:(root)`, `lib:platform`. An entry point is a node of its
 * own on the root floor (`catalog-api:entry:database/migrate.ts`): nothing imports it, so it ties
 * no folders together, whichever folder keeps it.
 */
function folderOf(file) {
  const parts = file.split('/');
  if (parts[0] === 'libs') return `lib:${parts[1]}`;
  if (ENTRY_POINT.test(parts[parts.length - 1]))
    return `${parts[1]}:entry:${parts.slice(3).join('/')}`;
  return `${parts[1]}:${parts.length === 4 ? '(root)' : parts[3]}`;
}
function floorOf(folder) {
  if (folder.startsWith('lib:')) return 0;
  const [app, area] = folder.split(':');
  if (area === '(root)' || area === 'entry' || (ASSEMBLIES[app] ?? []).includes(area)) return 3;
  return (FOUNDATION[app] ?? []).includes(area) ? 1 : 2;
}

const edges = [];
const texts = new Map();
for (const file of files) {
  const text = readFileSync(join(root, file), 'utf8');
  texts.set(file, text);
  const { importedFiles } = ts.preProcessFile(text, true, true);
  for (const { fileName } of importedFiles) {
    const target = resolveImport(file, fileName);
    if (target) edges.push([file, target]);
  }
}

// Folder graph and its strongly connected components (Tarjan).
const graph = new Map();
for (const [from, to] of edges) {
  const a = folderOf(from);
  const b = folderOf(to);
  if (a === b) continue;
  if (!graph.has(a)) graph.set(a, new Set());
  graph.get(a).add(b);
}
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const components = [];
let counter = 0;
function connect(v) {
  index.set(v, counter);
  low.set(v, counter++);
  stack.push(v);
  onStack.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!index.has(w)) {
      connect(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
  }
  if (low.get(v) === index.get(v)) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) components.push(component.sort());
  }
}
for (const v of graph.keys()) if (!index.has(v)) connect(v);

const upward = edges.filter(([from, to]) => floorOf(folderOf(from)) < floorOf(folderOf(to)));

const kebab = (name) => name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();

/**
 * What a file's classes say about its name: the roles they play (by decorator, base class, or
 * the role word ending the name), how many classes it declares, and its exported @Injectable
 * classes whose name has no role word (such a provider's file is named for it).
 */
function rolesPlayed(file) {
  const source = ts.createSourceFile(file, texts.get(file), ts.ScriptTarget.Latest, false);
  const roles = new Set();
  const plainProviders = [];
  let classes = 0;
  const visit = (node) => {
    if (ts.isClassDeclaration(node)) {
      classes += 1;
      const decorators = (ts.canHaveDecorators(node) ? (ts.getDecorators(node) ?? []) : []).map(
        (d) =>
          ts.isCallExpression(d.expression)
            ? d.expression.expression.getText(source)
            : d.expression.getText(source),
      );
      const bases = (node.heritageClauses ?? []).flatMap((h) =>
        h.types.map((t) => t.expression.getText(source)),
      );
      const name = node.name?.text ?? '';
      const before = roles.size;
      for (const [suffix, role] of Object.entries(ROLES)) {
        if ((role.decorators ?? []).some((d) => decorators.includes(d))) roles.add(suffix);
        if ((role.bases ?? []).some((b) => bases.includes(b))) roles.add(suffix);
      }
      // A class plays the role its name ends in, or the role of the base class it extends.
      const worded = ROLE_OF_WORD.filter(([word]) =>
        [name, ...bases].some((n) => n.endsWith(word) && n !== word),
      );
      for (const [, suffix] of worded) roles.add(suffix);
      const exported = (ts.getModifiers(node) ?? []).some(
        (m) => m.kind === ts.SyntaxKind.ExportKeyword,
      );
      if (
        decorators.includes('Injectable') &&
        exported &&
        worded.length === 0 &&
        roles.size === before
      ) {
        plainProviders.push(name);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { roles, classes, plainProviders };
}

/** Why a file's name does not say the role its content plays, or undefined when it does. */
function misnaming(file) {
  const name = file.split('/').pop();
  if (name === 'index.ts' || ENTRY_POINT.test(name) || file.includes('/migrations/'))
    return undefined;
  const parts = name.slice(0, -'.ts'.length).split('.');
  const written = parts.length > 1 ? parts[parts.length - 1] : undefined;
  const suffix = written && PLURALS.has(written) ? written.slice(0, -1) : written;
  const { roles, classes, plainProviders } = rolesPlayed(file);
  if (suffix !== undefined && !(suffix in ROLES)) return `".${suffix}" is no role suffix`;
  if (roles.size > 0 && !roles.has(suffix)) {
    return `plays ${[...roles].map((r) => `.${r}`).join(', ')} but is named ${suffix ? `.${suffix}` : 'without a role suffix'}`;
  }
  const role = suffix && ROLES[suffix];
  // A service is Nest's plain provider: an @Injectable without a role word may be one.
  const played = roles.has(suffix) || (suffix === 'service' && plainProviders.length > 0);
  if (role?.holds === 'class' && !played)
    return `named .${suffix} but declares no ${role.word ?? `@${role.decorators[0]}`} class`;
  if (role?.holds === 'any class' && classes === 0) return `named .${suffix} but declares no class`;
  if (suffix === undefined) {
    const stray = plainProviders.find((provider) => `${kebab(provider)}.ts` !== name);
    if (stray)
      return `the @Injectable ${stray} has no role word: its file is named for it (${kebab(stray)}.ts)`;
  }
  return undefined;
}
const misnamed = files.flatMap((file) => {
  const why = misnaming(file);
  return why ? [[file, why]] : [];
});

console.log(`production files: ${files.length}, imports between them: ${edges.length}`);
console.log(
  `folder cycles: ${components.length}${components.length ? ` (${components.map((c) => c.join(' <-> ')).join('; ')})` : ''}`,
);
console.log(`upward imports: ${upward.length}`);
console.log(`misnamed files: ${misnamed.length}`);
if (list) {
  for (const component of components) {
    console.log(`\nimports tying the cycle ${component.join(', ')}:`);
    const members = new Set(component);
    for (const [from, to] of edges) {
      const a = folderOf(from);
      const b = folderOf(to);
      if (a !== b && members.has(a) && members.has(b)) console.log(`  ${from} -> ${to}`);
    }
  }
  console.log('\nupward imports:');
  for (const [from, to] of upward) console.log(`  ${from} -> ${to}`);
  console.log('\nmisnamed files:');
  for (const [file, why] of misnamed) console.log(`  ${file}: ${why}`);
}
if (check && components.length + upward.length + misnamed.length > 0) {
  console.error(
    `\nimport-graph --check failed: ${components.length} folder cycles, ${upward.length} upward imports, ` +
      `${misnamed.length} misnamed files (run with --list; the rules: docs/architecture.md, "Where code lives").`,
  );
  process.exit(1);
}
